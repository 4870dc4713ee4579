/// Arithmetic, concatenation and comparison with Python's rules.
enum TemplateOperators {
    static func binary(_ symbol: String, _ left: TemplateValue, _ right: TemplateValue, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        if symbol == "~" { return .string(left.text + right.text) }
        for operand in [left, right] where operand.isUndefined { throw Renderer.undefinedError(operand, at: position) }
        func unsupported() -> TemplateError {
            Renderer.typeError("unsupported operand type(s) for \(symbol): '\(left.typeName)' and '\(right.typeName)'", at: position)
        }
        switch (symbol, left, right) {
        case ("+", .string(let a), .string(let b)): return .string(a + b)
        case ("+", .list(let a), .list(let b)): return .list(a + b)
        case ("+", .string, _), ("+", _, .string):
            throw Renderer.typeError(left.isString ? "can only concatenate str (not \"\(right.typeName)\") to str" : "unsupported operand type(s) for +: '\(left.typeName)' and 'str'", at: position)
        case ("*", .string(let text), .int(let count)), ("*", .int(let count), .string(let text)):
            return .string(String(repeating: text, count: max(0, count)))
        case ("*", .list(let items), .int(let count)), ("*", .int(let count), .list(let items)):
            return .list(Array(repeating: items, count: max(0, count)).flatMap { $0 })
        case ("%", .string(let format), _):
            return .string(try percentFormat(format, right, at: position))
        default:
            break
        }
        guard let a = left.numeric, let b = right.numeric else { throw unsupported() }
        let integers: (Int, Int)? = {
            switch (left, right) {
            case (.int(let x), .int(let y)): (x, y)
            case (.bool(let x), .int(let y)): (x ? 1 : 0, y)
            case (.int(let x), .bool(let y)): (x, y ? 1 : 0)
            case (.bool(let x), .bool(let y)): (x ? 1 : 0, y ? 1 : 0)
            default: nil
            }
        }()
        func zeroDivision() -> TemplateError {
            TemplateError(kind: "ZeroDivisionError", message: "division by zero", line: position.line, column: position.column)
        }
        switch symbol {
        case "+": return integers.map { .int($0.0 &+ $0.1) } ?? .float(a + b)
        case "-": return integers.map { .int($0.0 &- $0.1) } ?? .float(a - b)
        case "*": return integers.map { .int($0.0 &* $0.1) } ?? .float(a * b)
        case "/":
            guard b != 0 else { throw zeroDivision() }
            return .float(a / b)
        case "//":
            guard b != 0 else { throw zeroDivision() }
            if let (x, y) = integers {
                let quotient = x / y
                return .int((x % y != 0 && (x < 0) != (y < 0)) ? quotient - 1 : quotient)
            }
            return .float((a / b).rounded(.down))
        case "%":
            guard b != 0 else { throw zeroDivision() }
            if let (x, y) = integers {
                let remainder = x % y
                return .int(remainder != 0 && (remainder < 0) != (y < 0) ? remainder + y : remainder)
            }
            let remainder = a.truncatingRemainder(dividingBy: b)
            return .float(remainder != 0 && (remainder < 0) != (b < 0) ? remainder + b : remainder)
        case "**":
            if let (x, y) = integers, y >= 0 {
                var result = 1
                for _ in 0..<y { result = result &* x }
                return .int(result)
            }
            return .float(pow(a, b))
        default:
            throw unsupported()
        }
    }

    /// `format % values` with `%s`, `%r`, `%d`, `%i` and `%%`.
    private static func percentFormat(_ format: String, _ values: TemplateValue, at position: SourcePosition) throws(TemplateError) -> String {
        var arguments: [TemplateValue]
        if case .list(let items) = values { arguments = items } else { arguments = [values] }
        var result = ""
        var iterator = format.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                result.append(character)
                continue
            }
            guard let conversion = iterator.next() else { break }
            if conversion == "%" {
                result += "%"
                continue
            }
            guard !arguments.isEmpty else { throw Renderer.typeError("not enough arguments for format string", at: position) }
            let argument = arguments.removeFirst()
            switch conversion {
            case "r": result += argument.repr
            case "d", "i": result += argument.numeric.map { String(Int($0)) } ?? argument.text
            default: result += argument.text
            }
        }
        return result
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`, `in` and `not in`.
    static func compare(_ symbol: String, _ left: TemplateValue, _ right: TemplateValue, at position: SourcePosition) throws(TemplateError) -> Bool {
        switch symbol {
        case "==": return left.equals(right)
        case "!=": return !left.equals(right)
        case "in": return try contains(right, left, at: position)
        case "not in": return !(try contains(right, left, at: position))
        default:
            let order: Int
            switch (left, right) {
            case (.string(let a), .string(let b)):
                let (x, y) = (Array(a.unicodeScalars.map(\.value)), Array(b.unicodeScalars.map(\.value)))
                order = x == y ? 0 : x.lexicographicallyPrecedes(y) ? -1 : 1
            case (.list(let a), .list(let b)):
                order = try compareSequences(a, b, at: position)
            default:
                guard let a = left.numeric, let b = right.numeric else {
                    throw Renderer.typeError("'\(symbol)' not supported between instances of '\(left.typeName)' and '\(right.typeName)'", at: position)
                }
                order = a == b ? 0 : a < b ? -1 : 1
            }
            switch symbol {
            case "<": return order < 0
            case "<=": return order <= 0
            case ">": return order > 0
            default: return order >= 0
            }
        }
    }

    private static func compareSequences(_ a: [TemplateValue], _ b: [TemplateValue], at position: SourcePosition) throws(TemplateError) -> Int {
        for (x, y) in zip(a, b) where !x.equals(y) {
            return try compare("<", x, y, at: position) ? -1 : 1
        }
        return a.count == b.count ? 0 : a.count < b.count ? -1 : 1
    }

    /// Python's `needle in container`.
    static func contains(_ container: TemplateValue, _ needle: TemplateValue, at position: SourcePosition) throws(TemplateError) -> Bool {
        switch container {
        case .string(let text):
            guard case .string(let part) = needle else {
                throw Renderer.typeError("'in <string>' requires string as left operand, not \(needle.typeName)", at: position)
            }
            return part.isEmpty || Array(text.unicodeScalars).containsSequence(Array(part.unicodeScalars))
        case .list(let items): return items.contains { $0.equals(needle) }
        case .dictionary(let dictionary):
            guard TemplateValue.Dictionary.isKey(needle) else { throw Renderer.typeError("unhashable type: '\(needle.typeName)'", at: position) }
            return dictionary[needle] != nil
        case .undefined: return false
        default: throw Renderer.typeError("argument of type '\(container.typeName)' is not iterable", at: position)
        }
    }
}

extension TemplateValue {
    var isString: Bool {
        if case .string = self { return true }
        return false
    }
}

extension Array where Element: Equatable {
    /// Whether `part` occurs in the array as a contiguous run.
    func containsSequence(_ part: [Element]) -> Bool {
        firstRange(of: part) != nil
    }

    /// The first index at which `part` occurs.
    func firstRange(of part: [Element], from start: Int = 0) -> Int? {
        guard part.count <= count else { return nil }
        if part.isEmpty { return Swift.min(start, count) }
        var index = start
        while index + part.count <= count {
            if self[index] == part[0], self[index..<(index + part.count)].elementsEqual(part) { return index }
            index += 1
        }
        return nil
    }
}

private func pow(_ base: Double, _ exponent: Double) -> Double {
    guard exponent == exponent.rounded(), abs(exponent) < 1024 else { return .nan }
    var result = 1.0
    for _ in 0..<Int(abs(exponent)) { result *= base }
    return exponent < 0 ? 1 / result : result
}
