import PythonText

/// Runs a parsed template: scopes as jinja2 has them (a `for` body and a macro get their own,
/// `if` does not), `namespace()` objects, macros and call blocks, `break`/`continue`, and
/// errors that carry jinja2's kind and message.
struct Renderer {
    /// The globals and filters a render sees beyond jinja2's own.
    let environment: TemplateEnvironment
    private var scopes: [[String: TemplateValue]]
    private(set) var namespaces: [TemplateValue.Dictionary] = []
    private var macros: [Macro] = []

    struct Macro {
        let name: String
        let parameters: [Parameter]
        let body: [Node]
        /// The caller's body for a macro invoked from a call block.
        let caller: Int?
    }

    /// How deeply scopes (macro calls, loops) may nest.
    static let maximumDepth = 200

    private enum Flow {
        case normal
        case breakLoop
        case continueLoop
    }

    init(environment: TemplateEnvironment, variables: [String: TemplateValue]) {
        self.environment = environment
        scopes = [variables]
    }

    // MARK: - Nodes

    mutating func render(_ nodes: [Node]) throws(TemplateError) -> String {
        var output = ""
        _ = try run(nodes, into: &output)
        return output
    }

    private mutating func run(_ nodes: [Node], into output: inout String) throws(TemplateError) -> Flow {
        for node in nodes {
            switch node {
            case .text(let text):
                output += text
            case .output(let expression):
                output += try evaluate(expression).text
            case .conditional(let branches, let otherwise):
                var taken = false
                for branch in branches where try evaluate(branch.condition).isTruthy {
                    taken = true
                    let flow = try run(branch.body, into: &output)
                    if case .normal = flow { break }
                    return flow
                }
                if !taken {
                    let flow = try run(otherwise, into: &output)
                    if case .normal = flow {} else { return flow }
                }
            case .loop(let targets, let iterable, let filter, let body, let otherwise, let position):
                guard scopes.count < Self.maximumDepth else {
                    throw TemplateError(kind: "RecursionError", message: "maximum recursion depth exceeded", line: position.line, column: position.column)
                }
                try runLoop(targets: targets, iterable: iterable, filter: filter, body: body, otherwise: otherwise, at: position, into: &output)
            case .assign(let target, let expression, let position):
                try assign(try evaluate(expression), to: target, at: position)
            case .assignBlock(let name, let filters, let body):
                var value = TemplateValue.string(try capture(body))
                for filter in filters {
                    value = try applyFilter(filter.name, to: value, filter.arguments, at: filter.position)
                }
                scopes[scopes.count - 1][name] = value
            case .macro(let name, let parameters, let body):
                macros.append(Macro(name: name, parameters: parameters, body: body, caller: nil))
                scopes[scopes.count - 1][name] = .callable(.macro(macros.count - 1))
            case .callBlock(let call, let parameters, let body, let position):
                macros.append(Macro(name: "caller", parameters: parameters, body: body, caller: nil))
                let callerSlot = macros.count - 1
                guard case .call(let callee, let arguments, _) = call else {
                    throw TemplateError(kind: "TemplateSyntaxError", message: "a call block needs a macro call", line: position.line, column: position.column)
                }
                let function = try evaluate(callee)
                guard case .callable(.macro(let slot)) = function else {
                    throw TemplateError(kind: "TypeError", message: "'\(function.typeName)' object is not callable", line: position.line, column: position.column)
                }
                let macro = macros[slot]
                macros.append(Macro(name: macro.name, parameters: macro.parameters, body: macro.body, caller: callerSlot))
                let (positional, keywords) = try evaluateArguments(arguments)
                output += try callMacro(macros.count - 1, positional, keywords, at: position).text
            case .filterBlock(let filters, let body):
                var value = TemplateValue.string(try capture(body))
                for filter in filters {
                    value = try applyFilter(filter.name, to: value, filter.arguments, at: filter.position)
                }
                output += value.text
            case .breakLoop:
                return .breakLoop
            case .continueLoop:
                return .continueLoop
            }
        }
        return .normal
    }

    /// The output of `nodes` in the current scope.
    private mutating func capture(_ nodes: [Node]) throws(TemplateError) -> String {
        var output = ""
        _ = try run(nodes, into: &output)
        return output
    }

    private mutating func runLoop(targets: [String], iterable: Expression, filter: Expression?, body: [Node], otherwise: [Node],
                                  at position: SourcePosition, into output: inout String) throws(TemplateError) {
        let sequence = try evaluate(iterable)
        var items = try iterate(sequence, at: position)
        if let filter {
            var kept: [TemplateValue] = []
            for item in items {
                scopes.append([:])
                try bind(targets, to: item, at: position)
                let keep = try evaluate(filter).isTruthy
                scopes.removeLast()
                if keep { kept.append(item) }
            }
            items = kept
        }
        if items.isEmpty {
            _ = try run(otherwise, into: &output)
            return
        }
        for (index, item) in items.enumerated() {
            let loop: [(String, TemplateValue)] = [
                ("index", .int(index + 1)), ("index0", .int(index)),
                ("revindex", .int(items.count - index)), ("revindex0", .int(items.count - index - 1)),
                ("first", .bool(index == 0)), ("last", .bool(index == items.count - 1)),
                ("length", .int(items.count)), ("depth", .int(1)), ("depth0", .int(0)),
                ("previtem", index > 0 ? items[index - 1] : .undefined("'loop' has no previous item")),
                ("nextitem", index + 1 < items.count ? items[index + 1] : .undefined("'loop' has no next item")),
            ]
            scopes.append(["loop": .dictionary(TemplateValue.Dictionary(loop))])
            try bind(targets, to: item, at: position)
            let flow = try run(body, into: &output)
            scopes.removeLast()
            if case .breakLoop = flow { break }
        }
    }

    private mutating func bind(_ targets: [String], to item: TemplateValue, at position: SourcePosition) throws(TemplateError) {
        if targets.count == 1 {
            scopes[scopes.count - 1][targets[0]] = item
            return
        }
        let parts = try iterate(item, at: position)
        guard parts.count == targets.count else {
            throw TemplateError(kind: "ValueError", message: parts.count > targets.count
                                ? "too many values to unpack (expected \(targets.count))"
                                : "not enough values to unpack (expected \(targets.count), got \(parts.count))",
                                line: position.line, column: position.column)
        }
        for (name, value) in zip(targets, parts) { scopes[scopes.count - 1][name] = value }
    }

    private mutating func assign(_ value: TemplateValue, to target: AssignmentTarget, at position: SourcePosition) throws(TemplateError) {
        switch target {
        case .names(let names):
            try bind(names, to: value, at: position)
        case .attribute(let name, let attribute):
            guard case .namespace(let slot) = lookup(name) else {
                throw TemplateError(kind: "TemplateRuntimeError", message: "cannot assign attribute on non-namespace object", line: position.line, column: position.column)
            }
            namespaces[slot][attribute] = value
        }
    }

    // MARK: - Names

    private func lookup(_ name: String) -> TemplateValue {
        for scope in scopes.reversed() {
            if let value = scope[name] { return value }
        }
        if environment.globals.contains(name) { return .callable(.global(name)) }
        return .undefined("'\(name)' is undefined")
    }

    /// An error for using an undefined value in a way jinja2 rejects.
    static func undefinedError(_ value: TemplateValue, at position: SourcePosition) -> TemplateError {
        guard case .undefined(let message) = value else { return TemplateError(kind: "UndefinedError", message: "undefined") }
        return TemplateError(kind: "UndefinedError", message: message, line: position.line, column: position.column)
    }

    static func typeError(_ message: String, at position: SourcePosition) -> TemplateError {
        TemplateError(kind: "TypeError", message: message, line: position.line, column: position.column)
    }

    // MARK: - Expressions

    mutating func evaluate(_ expression: Expression) throws(TemplateError) -> TemplateValue {
        switch expression {
        case .literal(let value):
            return value
        case .name(let name, _):
            return lookup(name)
        case .list(let items):
            var values: [TemplateValue] = []
            for item in items { values.append(try evaluate(item)) }
            return .list(values)
        case .dictionary(let pairs, let position):
            var dictionary = TemplateValue.Dictionary()
            for pair in pairs {
                let key = try evaluate(pair.key)
                guard TemplateValue.Dictionary.isKey(key) else { throw Self.typeError("unhashable type: '\(key.typeName)'", at: position) }
                dictionary[key] = try evaluate(pair.value)
            }
            return .dictionary(dictionary)
        case .attribute(let base, let name, let position):
            return try attribute(name, of: try evaluate(base), at: position)
        case .subscript(let base, let index, let position):
            return try item(try evaluate(index), of: try evaluate(base), at: position)
        case .slice(let base, let start, let stop, let step, let position):
            return try slice(try evaluate(base), start: try start.map { e throws(TemplateError) in try evaluate(e) },
                             stop: try stop.map { e throws(TemplateError) in try evaluate(e) },
                             step: try step.map { e throws(TemplateError) in try evaluate(e) }, at: position)
        case .call(let callee, let arguments, let position):
            let function = try evaluate(callee)
            let (positional, keywords) = try evaluateArguments(arguments)
            return try call(function, positional, keywords, at: position)
        case .filter(let base, let name, let arguments, let position):
            return try applyFilter(name, to: try evaluate(base), arguments, at: position)
        case .test(let base, let name, let arguments, let negated, let position):
            let value = try evaluate(base)
            let (positional, _) = try evaluateArguments(arguments)
            let result = try Tests.apply(name, to: value, positional, at: position)
            return .bool(result != negated)
        case .negate(let operand, let position):
            let value = try evaluate(operand)
            switch value {
            case .int(let number): return .int(-number)
            case .float(let number): return .float(-number)
            case .bool(let flag): return .int(flag ? -1 : 0)
            case .undefined: throw Self.undefinedError(value, at: position)
            default: throw Self.typeError("bad operand type for unary -: '\(value.typeName)'", at: position)
            }
        case .not(let operand):
            return .bool(!(try evaluate(operand).isTruthy))
        case .and(let left, let right):
            let value = try evaluate(left)
            return value.isTruthy ? try evaluate(right) : value
        case .or(let left, let right):
            let value = try evaluate(left)
            return value.isTruthy ? value : try evaluate(right)
        case .conditional(let then, let condition, let otherwise):
            if try evaluate(condition).isTruthy { return try evaluate(then) }
            return try otherwise.map { e throws(TemplateError) in try evaluate(e) } ?? .undefined("the inline if-expression on line evaluated to false and no else section was defined.")
        case .binary(let symbol, let left, let right, let position):
            return try TemplateOperators.binary(symbol, try evaluate(left), try evaluate(right), at: position)
        case .compare(let first, let operations, let position):
            var left = try evaluate(first)
            for operation in operations {
                let right = try evaluate(operation.operand)
                guard try TemplateOperators.compare(operation.symbol, left, right, at: position) else { return .bool(false) }
                left = right
            }
            return .bool(true)
        }
    }

    private mutating func evaluateArguments(_ arguments: Arguments) throws(TemplateError) -> ([TemplateValue], [String: TemplateValue]) {
        var positional: [TemplateValue] = []
        for argument in arguments.positional { positional.append(try evaluate(argument)) }
        var keywords: [String: TemplateValue] = [:]
        for keyword in arguments.keywords { keywords[keyword.name] = try evaluate(keyword.value) }
        return (positional, keywords)
    }

    /// jinja2's `getattr`: an attribute (a method or a namespace member) first, then an item.
    func attribute(_ name: String, of value: TemplateValue, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        switch value {
        case .undefined:
            throw Self.undefinedError(value, at: position)
        case .namespace(let slot):
            return namespaces[slot][name] ?? .undefined("'Namespace' object has no attribute '\(name)'")
        case .dictionary(let dictionary):
            if TemplateMethods.has(name, on: value) { return .callable(.method(value, name)) }
            return dictionary[name] ?? .undefined("'dict object' has no attribute '\(name)'")
        default:
            if TemplateMethods.has(name, on: value) { return .callable(.method(value, name)) }
            return .undefined("'\(Self.objectName(value))' has no attribute '\(name)'")
        }
    }

    /// How jinja2 names an object in "has no attribute" messages.
    static func objectName(_ value: TemplateValue) -> String {
        switch value {
        case .none: "None"
        case .string(let text): PythonText.repr(text)
        case .int, .float, .bool: value.repr
        default: "\(value.typeName) object"
        }
    }

    /// jinja2's `getitem`: an item first, then an attribute.
    func item(_ key: TemplateValue, of value: TemplateValue, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        switch (value, key) {
        case (.undefined, _):
            throw Self.undefinedError(value, at: position)
        case (.dictionary(let dictionary), _):
            if let found = dictionary[key] { return found }
        case (.list(let items), .int(let index)):
            let resolved = index < 0 ? items.count + index : index
            if items.indices.contains(resolved) { return items[resolved] }
            return .undefined("'list object' has no element \(index)")
        case (.string(let text), .int(let index)):
            let scalars = Array(text.unicodeScalars)
            let resolved = index < 0 ? scalars.count + index : index
            if scalars.indices.contains(resolved) { return .string(String(scalars[resolved])) }
            return .undefined("'str object' has no element \(index)")
        case (.namespace, .string(let name)):
            return try attribute(name, of: value, at: position)
        default:
            break
        }
        if case .string(let name) = key {
            if TemplateMethods.has(name, on: value) { return .callable(.method(value, name)) }
            return .undefined("'\(Self.objectName(value))' has no attribute '\(name)'")
        }
        return .undefined("'\(Self.objectName(value))' has no element \(key.repr)")
    }

    private func slice(_ value: TemplateValue, start: TemplateValue?, stop: TemplateValue?, step: TemplateValue?, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        func integer(_ bound: TemplateValue?) throws(TemplateError) -> Int? {
            guard let bound, !(bound.isUndefined) else { return nil }
            if case .none = bound { return nil }
            guard case .int(let number) = bound else { throw Self.typeError("slice indices must be integers or None", at: position) }
            return number
        }
        let stepValue = try integer(step) ?? 1
        guard stepValue != 0 else { throw TemplateError(kind: "ValueError", message: "slice step cannot be zero", line: position.line, column: position.column) }
        func indices(count: Int) throws(TemplateError) -> [Int] {
            func clamp(_ bound: Int?, _ defaultValue: Int) -> Int {
                guard var bound else { return defaultValue }
                if bound < 0 { bound += count }
                return stepValue > 0 ? min(max(bound, 0), count) : min(max(bound, -1), count - 1)
            }
            let from = clamp(try integer(start), stepValue > 0 ? 0 : count - 1)
            let to = clamp(try integer(stop), stepValue > 0 ? count : -1)
            return Array(stride(from: from, to: to, by: stepValue))
        }
        switch value {
        case .list(let items):
            return .list(try indices(count: items.count).map { items[$0] })
        case .string(let text):
            let scalars = Array(text.unicodeScalars)
            var result = String.UnicodeScalarView()
            for index in try indices(count: scalars.count) { result.append(scalars[index]) }
            return .string(String(result))
        case .undefined:
            throw Self.undefinedError(value, at: position)
        default:
            throw Self.typeError("'\(value.typeName)' object is not subscriptable", at: position)
        }
    }

    /// The items of a value a `for` loop or filter walks over.
    func iterate(_ value: TemplateValue, at position: SourcePosition) throws(TemplateError) -> [TemplateValue] {
        switch value {
        case .undefined: return []
        case .list(let items): return items
        case .dictionary(let dictionary): return dictionary.keys
        case .string(let text): return text.unicodeScalars.map { .string(String($0)) }
        case .namespace(let slot): return namespaces[slot].keys
        default: throw Self.typeError("'\(value.typeName)' object is not iterable", at: position)
        }
    }

    // MARK: - Calls

    mutating func call(_ function: TemplateValue, _ positional: [TemplateValue], _ keywords: [String: TemplateValue], at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        switch function {
        case .callable(.macro(let slot)):
            return try callMacro(slot, positional, keywords, at: position)
        case .callable(.global(let name)):
            return try callGlobal(name, positional, keywords, at: position)
        case .callable(.method(let receiver, let name)):
            return try TemplateMethods.call(name, on: receiver, positional, keywords, renderer: &self, at: position)
        case .undefined:
            throw Self.undefinedError(function, at: position)
        default:
            throw Self.typeError("'\(function.typeName)' object is not callable", at: position)
        }
    }

    private mutating func callMacro(_ slot: Int, _ positional: [TemplateValue], _ keywords: [String: TemplateValue], at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        // A macro that calls itself without end fails as Python does, instead of overflowing the stack.
        guard scopes.count < Self.maximumDepth else {
            throw TemplateError(kind: "RecursionError", message: "maximum recursion depth exceeded", line: position.line, column: position.column)
        }
        let macro = macros[slot]
        var scope: [String: TemplateValue] = [:]
        var extra: [TemplateValue] = []
        for (index, value) in positional.enumerated() {
            if index < macro.parameters.count { scope[macro.parameters[index].name] = value } else { extra.append(value) }
        }
        var extraKeywords = TemplateValue.Dictionary()
        for (name, value) in keywords.sorted(by: { $0.key < $1.key }) {
            if macro.parameters.contains(where: { $0.name == name }) { scope[name] = value } else { extraKeywords[name] = value }
        }
        scopes.append(scope)
        defer { scopes.removeLast() }
        for parameter in macro.parameters where scopes[scopes.count - 1][parameter.name] == nil {
            scopes[scopes.count - 1][parameter.name] = try parameter.defaultValue.map { e throws(TemplateError) in try evaluate(e) }
                ?? .undefined("parameter '\(parameter.name)' was not provided")
        }
        scopes[scopes.count - 1]["varargs"] = .list(extra)
        scopes[scopes.count - 1]["kwargs"] = .dictionary(extraKeywords)
        if let caller = macro.caller { scopes[scopes.count - 1]["caller"] = .callable(.macro(caller)) }
        return .string(try capture(macro.body))
    }

    private mutating func callGlobal(_ name: String, _ positional: [TemplateValue], _ keywords: [String: TemplateValue], at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        switch name {
        case "namespace":
            var dictionary = TemplateValue.Dictionary()
            if case .dictionary(let initial)? = positional.first { dictionary = initial }
            for (key, value) in keywords.sorted(by: { $0.key < $1.key }) { dictionary[key] = value }
            namespaces.append(dictionary)
            return .namespace(namespaces.count - 1)
        case "dict":
            var dictionary = TemplateValue.Dictionary()
            for (key, value) in keywords.sorted(by: { $0.key < $1.key }) { dictionary[key] = value }
            return .dictionary(dictionary)
        case "range":
            let numbers = positional.compactMap { value -> Int? in if case .int(let number) = value { number } else { nil } }
            guard numbers.count == positional.count, (1...3).contains(numbers.count) else {
                throw Self.typeError("range() takes 1 to 3 integer arguments", at: position)
            }
            let (start, stop, step) = numbers.count == 1 ? (0, numbers[0], 1) : (numbers[0], numbers[1], numbers.count == 3 ? numbers[2] : 1)
            guard step != 0 else { throw TemplateError(kind: "ValueError", message: "range() arg 3 must not be zero", line: position.line, column: position.column) }
            let items = stride(from: start, to: stop, by: step)
            // jinja2's sandbox refuses ranges past MAX_RANGE, so a template cannot exhaust memory.
            guard items.underestimatedCount <= 100_000, (stop - start) / step <= 100_000 else {
                throw TemplateError(kind: "OverflowError", message: "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).",
                                    line: position.line, column: position.column)
            }
            return .list(items.map { .int($0) })
        default:
            return try environment.callGlobal(name, positional, keywords, at: position)
        }
    }

    // MARK: - Filters

    private mutating func applyFilter(_ name: String, to value: TemplateValue, _ arguments: Arguments, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        let (positional, keywords) = try evaluateArguments(arguments)
        return try Filters.apply(name, to: value, positional, keywords, renderer: &self, at: position)
    }
}
