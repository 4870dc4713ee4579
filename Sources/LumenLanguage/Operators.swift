import Tensors

/// Lumen's operators on values: Int arithmetic that reports overflow instead of trapping, Int
/// and Double mixing to Double, string and array concatenation, comparisons, ranges, subscripts.
package enum Operators {
    package static func unary(_ operation: String, _ value: Value, at location: SourceLocation) throws -> Value {
        switch (operation, value) {
        case ("-", .integer(let number)):
            let (negated, overflow) = Int(0).subtractingReportingOverflow(number)
            guard !overflow else { throw LumenError(.value, "integer overflow negating \(number)", at: location) }
            return .integer(negated)
        case ("-", .double(let number)): return .double(-number)
        case ("!", .bool(let flag)): return .bool(!flag)
        case ("-", .host(let tensor as TensorObject)): return try tensor.combined("*", with: .integer(-1), reversed: false, at: location)
        default:
            throw LumenError(.type, "'\(operation)' cannot be applied to \(value.typeName)", at: location)
        }
    }

    package static func binary(_ operation: String, _ left: Value, _ right: Value, at location: SourceLocation) throws -> Value {
        // Tensors combine elementwise, comparisons giving masks, as NumPy's arrays.
        if BinaryOperation.byOperator[operation] != nil {
            if case .host(let tensor as TensorObject) = left { return try tensor.combined(operation, with: right, reversed: false, at: location) }
            if case .host(let tensor as TensorObject) = right { return try tensor.combined(operation, with: left, reversed: true, at: location) }
        }
        // Host objects that stand for a number (a perplexity) take part as that number.
        if case .host(let object) = left, let number = object.numericValue { return try binary(operation, .double(number), right, at: location) }
        if case .host(let object) = right, let number = object.numericValue { return try binary(operation, left, .double(number), at: location) }
        switch operation {
        case "==": return .bool(left.equals(right))
        case "!=": return .bool(!left.equals(right))
        case "<", "<=", ">", ">=": return .bool(try compare(operation, left, right, at: location))
        case "..<", "...":
            if left.isNull || right.isNull { return .host(try partialRange(operation, left, right, at: location)) }
            guard case .integer(let lower) = left, case .integer(let upper) = right else {
                throw LumenError(.type, "a range needs Int bounds, not \(left.typeName) and \(right.typeName)", at: location)
            }
            let end: (partialValue: Int, overflow: Bool) = operation == "..." ? upper.addingReportingOverflow(1) : (upper, false)
            guard !end.overflow, lower <= end.partialValue else {
                throw LumenError(.value, "a range's lower bound \(lower) must not exceed its upper bound \(upper)", at: location)
            }
            return try range(lower, upTo: end.partialValue, written: "the range \(lower)\(operation)\(upper)", at: location)
        default: break
        }
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return try integer(operation, a, b, at: location)
        case (.integer(let a), .double(let b)): return try double(operation, Double(a), b, at: location)
        case (.double(let a), .integer(let b)): return try double(operation, a, Double(b), at: location)
        case (.double(let a), .double(let b)): return try double(operation, a, b, at: location)
        case (.string(let a), .string(let b)) where operation == "+": return .string(a + b)
        case (.array(let a), .array(let b)) where operation == "+": return .array(a + b)
        default:
            throw LumenError(.type, "'\(operation)' cannot be applied to \(left.typeName) and \(right.typeName)", at: location)
        }
    }

    /// `2...`, `..<3`, `...3` or `...` (a null bound is open): a closed upper bound becomes the
    /// index after it, and `...-1` the axis's end.
    /// The range of the integers from `lower` up to, not including, `end` (`lower` ≤ `end`), as
    /// every range is made (`written` names it as the program spelt it, for the error): refused
    /// when it holds more integers than an Int counts, as every user of a range takes its count to be.
    package static func range(_ lower: Int, upTo end: Int, written: String, at location: SourceLocation) throws -> Value {
        guard !end.subtractingReportingOverflow(lower).overflow else {
            throw LumenError(.value, "\(written) holds more integers than an Int counts", at: location)
        }
        return .range(lower, end)
    }

    private static func partialRange(_ operation: String, _ left: Value, _ right: Value, at location: SourceLocation) throws -> PartialRange {
        func bound(_ value: Value) throws -> Int? {
            switch value {
            case .null: return nil
            case .integer(let number): return number
            default: throw LumenError(.type, "a range needs Int bounds, not \(value.typeName)", at: location)
            }
        }
        var upper = try bound(right)
        if operation == "...", let closed = upper { upper = closed == -1 ? nil : closed + 1 }
        return PartialRange(lower: try bound(left), upper: upper)
    }

    private static func integer(_ operation: String, _ a: Int, _ b: Int, at location: SourceLocation) throws -> Value {
        let result: (partialValue: Int, overflow: Bool)
        switch operation {
        case "+": result = a.addingReportingOverflow(b)
        case "-": result = a.subtractingReportingOverflow(b)
        case "*": result = a.multipliedReportingOverflow(by: b)
        case "/", "%":
            guard b != 0 else { throw LumenError(.value, "division by zero", at: location) }
            result = operation == "/" ? a.dividedReportingOverflow(by: b) : a.remainderReportingOverflow(dividingBy: b)
        default: throw LumenError(.type, "'\(operation)' cannot be applied to Int and Int", at: location)
        }
        guard !result.overflow else { throw LumenError(.value, "integer overflow in \(a) \(operation) \(b)", at: location) }
        return .integer(result.partialValue)
    }

    private static func double(_ operation: String, _ a: Double, _ b: Double, at location: SourceLocation) throws -> Value {
        switch operation {
        case "+": return .double(a + b)
        case "-": return .double(a - b)
        case "*": return .double(a * b)
        case "/": return .double(a / b)
        case "%": return .double(a.truncatingRemainder(dividingBy: b))
        default: throw LumenError(.type, "'\(operation)' cannot be applied to Double and Double", at: location)
        }
    }

    private static func compare(_ operation: String, _ left: Value, _ right: Value, at location: SourceLocation) throws -> Bool {
        let ordered: Bool
        let equal: Bool
        switch (left, right) {
        case (.integer(let a), .integer(let b)): (ordered, equal) = (a < b, a == b)
        case (.string(let a), .string(let b)): (ordered, equal) = (a < b, a == b)
        default:
            guard let a = number(left), let b = number(right) else {
                throw LumenError(.type, "'\(operation)' cannot compare \(left.typeName) and \(right.typeName)", at: location)
            }
            (ordered, equal) = (a < b, a == b)
        }
        switch operation {
        case "<": return ordered
        case "<=": return ordered || equal
        case ">": return !ordered && !equal
        default: return !ordered
        }
    }

    /// The value as a Double, if it is a number.
    package static func number(_ value: Value) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .double(let number): number
        case .host(let object): object.numericValue
        default: nil
        }
    }

    /// What `for … in` walks, one element at a time: a range's integers are made as the loop
    /// reaches them (`for seed in 0..<1000000 { … }` starts at once and holds one), other
    /// sequences' elements as `elements(of:at:)` gives them.
    package static func iteration(of sequence: Value, at location: SourceLocation) throws -> AnySequence<Value> {
        if case .range(let lower, let upper) = sequence { return AnySequence((lower..<upper).lazy.map { Value.integer($0) }) }
        return AnySequence(try elements(of: sequence, at: location))
    }

    /// The most integers a range is made into as an array (a method called on it, a built-in that
    /// takes a list): 2^24, 640 MiB of values. `for … in` takes any range, one integer at a time.
    package static let maximumRangeElements = 1 << 24

    /// The elements of a sequence: array elements, range integers (at most
    /// `maximumRangeElements`), string characters, dictionary pairs.
    package static func elements(of sequence: Value, at location: SourceLocation) throws -> [Value] {
        switch sequence {
        case .array(let elements): return elements
        case .range(let lower, let upper):
            // The bounds were checked when the range was made: 0 ≤ upper − lower ≤ Int.max.
            guard upper - lower <= maximumRangeElements else {
                throw LumenError(.value, "the range \(lower)..<\(upper) has more than the \(maximumRangeElements) integers one list may hold; "
                                 + "for … in takes them one at a time", at: location)
            }
            return (lower..<upper).map { .integer($0) }
        case .string(let text): return text.map { .string(String($0)) }
        case .dictionary(let dictionary): return dictionary.pairs.map { .array([$0.key, $0.value]) }
        case .host(let object as any IndexableHostObject): return (0..<object.count).compactMap { object.element(at: $0) }
        default: throw LumenError(.type, "a \(sequence.typeName) is not a sequence", at: location)
        }
    }

    package static func subscripted(_ container: Value, _ index: Value, at location: SourceLocation) throws -> Value {
        switch (container, index) {
        case (.array(let elements), _):
            return try subscripted(elements, index, at: location)
        case (.string(let text), .integer(let position)):
            guard position >= 0, position < text.count else {
                throw LumenError(.index, "index \(position) is out of range for a string of \(text.count) characters", at: location)
            }
            return .string(String(text[text.index(text.startIndex, offsetBy: position)]))
        case (.host(let tensor as TensorObject), _):
            return try tensor.subscripted(by: index, at: location)
        case (.host(let object as any IndexableHostObject), .integer(let index)):
            let position = index < 0 ? object.count + index : index
            guard let element = object.element(at: position) else {
                throw LumenError(.index, "index \(index) is out of range for \(object.typeName) of \(object.count)", at: location)
            }
            return element
        case (.host(let object as any IndexableHostObject), .range(let lower, let upper)):
            return try sliced(object, PartialRange(lower: lower, upper: upper), at: location)
        case (.host(let object as any IndexableHostObject), .host(let partial as PartialRange)):
            return try sliced(object, partial, at: location)
        case (.dictionary(let dictionary), _):
            guard DictionaryKey(index) != nil else {
                throw LumenError(.type, "a \(index.typeName) cannot be a dictionary key", at: location)
            }
            return dictionary[index] ?? .null
        default:
            throw LumenError(.type, "a \(container.typeName) cannot be subscripted with \(index.typeName)", at: location)
        }
    }

    /// The elements of `object` that `range` selects (bounds negative from the end).
    private static func sliced(_ object: any IndexableHostObject, _ range: PartialRange, at location: SourceLocation) throws -> Value {
        guard let indices = range.indices(in: object.count) else {
            throw LumenError(.index, "range \(range.summary) is out of bounds for \(object.typeName) of \(object.count)", at: location)
        }
        guard let slice = object.slice(indices) else { throw LumenError(.type, "a \(object.typeName) cannot be sliced", at: location) }
        return slice
    }

    /// The elements of an array `index` selects, with NumPy's rules: an Int (negative from the
    /// end), a range, an array of Ints, or several of these, one per nesting level
    /// (`a[0..<2, -1]`: the last element of each of the first two).
    private static func subscripted(_ elements: [Value], _ index: Value, at location: SourceLocation) throws -> Value {
        func position(_ value: Int) throws -> Int {
            let resolved = value < 0 ? elements.count + value : value
            guard elements.indices.contains(resolved) else {
                throw LumenError(.index, "index \(value) is out of range for an array of \(elements.count)", at: location)
            }
            return resolved
        }
        switch index {
        case .integer(let value):
            return elements[try position(value)]
        case .range(let lower, let upper):
            guard let range = PartialRange(lower: lower, upper: upper).indices(in: elements.count) else {
                throw LumenError(.index, "range \(lower)..<\(upper) is out of bounds for an array of \(elements.count)", at: location)
            }
            return .array(Array(elements[range]))
        case .host(let partial as PartialRange):
            guard let range = partial.indices(in: elements.count) else {
                throw LumenError(.index, "range \(partial.summary) is out of bounds for an array of \(elements.count)", at: location)
            }
            return .array(Array(elements[range]))
        case .array(let positions):
            return .array(try positions.map { value in
                guard case .integer(let number) = value else { throw LumenError(.type, "an array's index list holds Ints, not \(value.typeName)", at: location) }
                return elements[try position(number)]
            })
        case .host(let tuple as IndexTuple):
            guard let first = tuple.items.first else { return .array(elements) }
            let rest = tuple.items.count == 2 ? tuple.items[1] : .host(IndexTuple(Array(tuple.items.dropFirst())))
            let selected = try subscripted(elements, first, at: location)
            if case .integer = first { return try subscripted(selected, rest, at: location) }
            guard case .array(let chosen) = selected else { return selected }
            return .array(try chosen.map { try subscripted($0, rest, at: location) })
        default:
            throw LumenError(.type, "an array cannot be subscripted with \(index.typeName)", at: location)
        }
    }

    /// `container` with the element at `index` replaced by `value` (nil removes a dictionary entry).
    package static func replacing(_ index: Value, in container: Value, with value: Value, at location: SourceLocation) throws -> Value {
        switch (container, index) {
        case (.array(var elements), .integer(let index)):
            let position = index < 0 ? elements.count + index : index
            guard elements.indices.contains(position) else {
                throw LumenError(.index, "index \(index) is out of range for an array of \(elements.count)", at: location)
            }
            elements[position] = value
            return .array(elements)
        case (.dictionary(var dictionary), _):
            guard DictionaryKey(index) != nil else {
                throw LumenError(.type, "a \(index.typeName) cannot be a dictionary key", at: location)
            }
            dictionary[index] = value.isNull ? nil : value
            return .dictionary(dictionary)
        default:
            throw LumenError(.type, "cannot assign through a \(index.typeName) subscript of a \(container.typeName)", at: location)
        }
    }
}
