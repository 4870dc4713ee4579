/// jinja2's tests (`is defined`, `is string`, `is divisibleby 3`, …), one table.
enum Tests {
    private typealias Test = @Sendable (_ value: TemplateValue, _ arguments: [TemplateValue], _ position: SourcePosition) throws(TemplateError) -> Bool

    private static let table: [String: Test] = [
        "defined": { value, _, _ in !value.isUndefined },
        "undefined": { value, _, _ in value.isUndefined },
        "none": { value, _, _ in if case .none = value { true } else { false } },
        "string": { value, _, _ in value.isString },
        "mapping": { value, _, _ in if case .dictionary = value { true } else { false } },
        "iterable": { value, _, _ in
            switch value {
            case .list, .dictionary, .string, .undefined: true
            default: false
            }
        },
        "sequence": { value, _, _ in
            switch value {
            case .list, .dictionary, .string: true
            default: false
            }
        },
        "number": { value, _, _ in
            switch value {
            case .int, .float, .bool: true
            default: false
            }
        },
        "integer": { value, _, _ in if case .int = value { true } else { false } },
        "float": { value, _, _ in if case .float = value { true } else { false } },
        "boolean": { value, _, _ in if case .bool = value { true } else { false } },
        "true": { value, _, _ in if case .bool(true) = value { true } else { false } },
        "false": { value, _, _ in if case .bool(false) = value { true } else { false } },
        "callable": { value, _, _ in if case .callable = value { true } else { false } },
        "even": { value, _, position throws(TemplateError) in try integer(value, position) % 2 == 0 },
        "odd": { value, _, position throws(TemplateError) in try integer(value, position) % 2 != 0 },
        "divisibleby": { value, arguments, position throws(TemplateError) in
            let divisor = try integer(arguments.first ?? .none, position)
            let dividend = try integer(value, position)
            return divisor != 0 && dividend % divisor == 0
        },
        "eq": { value, arguments, _ in value.equals(arguments.first ?? .none) },
        "ne": { value, arguments, _ in !value.equals(arguments.first ?? .none) },
        "lt": { value, arguments, position throws(TemplateError) in try TemplateOperators.compare("<", value, arguments.first ?? .none, at: position) },
        "le": { value, arguments, position throws(TemplateError) in try TemplateOperators.compare("<=", value, arguments.first ?? .none, at: position) },
        "gt": { value, arguments, position throws(TemplateError) in try TemplateOperators.compare(">", value, arguments.first ?? .none, at: position) },
        "ge": { value, arguments, position throws(TemplateError) in try TemplateOperators.compare(">=", value, arguments.first ?? .none, at: position) },
        "in": { value, arguments, position throws(TemplateError) in try TemplateOperators.contains(arguments.first ?? .none, value, at: position) },
        "sameas": { value, arguments, _ in
            switch (value, arguments.first ?? .none) {
            case (.none, .none), (.undefined, .undefined): true
            case (.bool(let a), .bool(let b)): a == b
            default: false
            }
        },
        "lower": { value, _, _ in if case .string(let text) = value { text == text.lowercased() } else { false } },
        "upper": { value, _, _ in if case .string(let text) = value { text == text.uppercased() } else { false } },
    ]

    private static let aliases = ["equalto": "eq", "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
                                  "greaterthan": "gt", "lessthan": "lt"]

    private static func integer(_ value: TemplateValue, _ position: SourcePosition) throws(TemplateError) -> Int {
        switch value {
        case .int(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        case .float(let number): return Int(number)
        default: throw Renderer.typeError("an integer is required, not '\(value.typeName)'", at: position)
        }
    }

    /// Whether `value` passes test `name`.
    static func apply(_ name: String, to value: TemplateValue, _ arguments: [TemplateValue], at position: SourcePosition) throws(TemplateError) -> Bool {
        guard let test = table[aliases[name] ?? name] else {
            throw TemplateError(kind: "TemplateRuntimeError", message: "No test named '\(name)'.", line: position.line, column: position.column)
        }
        return try test(value, arguments, position)
    }
}
