/// The arguments of one call, consumed by the function's body: positional arguments in order,
/// labelled ones by label. Whatever the body does not take is reported as an error.
public struct Arguments: Sendable {
    private var positional: [(Value, SourceLocation)]
    private var labelled: [(String, Value, SourceLocation)]
    /// The function called, for messages.
    package let function: String
    /// The labels the function takes, for a hint when a label is misspelt.
    private let knownLabels: [String]
    /// Where the call is.
    package let callLocation: SourceLocation

    package init(function: String, at location: SourceLocation, positional: [(Value, SourceLocation)], labelled: [(String, Value, SourceLocation)],
         knownLabels: [String] = []) {
        self.function = function
        self.callLocation = location
        self.positional = positional
        self.labelled = labelled
        self.knownLabels = knownLabels
    }

    /// These arguments with `value` before the positional ones (a method's receiver), for a
    /// function taking `knownLabels`.
    func prepending(_ value: Value, at location: SourceLocation, knownLabels: [String]) -> Arguments {
        Arguments(function: function, at: callLocation, positional: [(value, location)] + positional, labelled: labelled, knownLabels: knownLabels)
    }

    /// Takes every labelled argument left, in the order the call wrote them.
    package mutating func remainingLabelled() -> [(label: String, value: Value, location: SourceLocation)] {
        defer { labelled.removeAll() }
        return labelled.map { (label: $0.0, value: $0.1, location: $0.2) }
    }

    /// Whether an argument labelled `label` is still there.
    package func has(_ label: String) -> Bool {
        labelled.contains { $0.0 == label }
    }

    /// Adds a labelled argument (a default the call did not give).
    package mutating func add(_ label: String, _ value: Value) {
        labelled.append((label, value, callLocation))
    }

    /// Takes the next positional argument, or nil when there is none.
    public mutating func nextPositional() -> (Value, SourceLocation)? {
        positional.isEmpty ? nil : positional.removeFirst()
    }

    /// The next positional argument's value, without taking it.
    public func peekPositional() -> Value? {
        positional.first?.0
    }

    /// Takes the next positional argument, failing when there is none.
    public mutating func requirePositional(_ name: String) throws(LumenError) -> (Value, SourceLocation) {
        guard let argument = nextPositional() else {
            throw LumenError(.type, "\(function)() is missing its argument '\(name)'", at: callLocation)
        }
        return argument
    }

    /// Takes all remaining positional arguments.
    public mutating func remainingPositional() -> [(Value, SourceLocation)] {
        defer { positional.removeAll() }
        return positional
    }

    /// Takes the argument labelled `label`, if given.
    public mutating func labelled(_ label: String) -> (Value, SourceLocation)? {
        guard let index = labelled.firstIndex(where: { $0.0 == label }) else { return nil }
        let (_, value, location) = labelled.remove(at: index)
        return (value, location)
    }

    /// Takes the argument labelled `label`, failing when it is missing.
    public mutating func requireLabelled(_ label: String) throws(LumenError) -> (Value, SourceLocation) {
        guard let argument = labelled(label) else {
            throw LumenError(.type, "\(function)() is missing its argument '\(label):'", at: callLocation)
        }
        return argument
    }

    /// Takes the String argument labelled `label`, if given.
    public mutating func labelledString(_ label: String) throws(LumenError) -> String? {
        guard let argument = labelled(label) else { return nil }
        return try string(argument, label)
    }

    /// Takes the Int argument labelled `label`, if given.
    public mutating func labelledInteger(_ label: String) throws(LumenError) -> Int? {
        guard let argument = labelled(label) else { return nil }
        return try integer(argument, label)
    }

    /// Takes the numeric argument labelled `label`, if given.
    public mutating func labelledNumber(_ label: String) throws(LumenError) -> Double? {
        guard let argument = labelled(label) else { return nil }
        return try number(argument, label)
    }

    /// Takes the Bool argument labelled `label`, if given.
    public mutating func labelledBool(_ label: String) throws(LumenError) -> Bool? {
        guard let (value, location) = labelled(label) else { return nil }
        guard case .bool(let flag) = value else {
            throw LumenError(.type, "\(function)() expects a Bool for '\(label)', got \(value.typeName)", at: location)
        }
        return flag
    }

    /// Fails if any argument was not taken.
    public func finish() throws(LumenError) {
        if let (_, location) = positional.first {
            throw LumenError(.type, "\(function)() got too many arguments", at: location)
        }
        if let (label, _, location) = labelled.first {
            throw LumenError(.type, "\(function)() has no argument labelled '\(label):'" + Suggestion.hint(for: label, among: knownLabels, suffix: ":"),
                             at: location)
        }
    }

    /// `value` as a string, or a type error naming the argument.
    public func string(_ argument: (Value, SourceLocation), _ name: String) throws(LumenError) -> String {
        guard case .string(let text) = argument.0 else {
            throw LumenError(.type, "\(function)() expects a String for '\(name)', got \(argument.0.typeName)", at: argument.1)
        }
        return text
    }

    /// `value` as an Int, or a type error naming the argument.
    public func integer(_ argument: (Value, SourceLocation), _ name: String) throws(LumenError) -> Int {
        guard case .integer(let number) = argument.0 else {
            throw LumenError(.type, "\(function)() expects an Int for '\(name)', got \(argument.0.typeName)", at: argument.1)
        }
        return number
    }

    /// `value` as a number, or a type error naming the argument.
    public func number(_ argument: (Value, SourceLocation), _ name: String) throws(LumenError) -> Double {
        switch argument.0 {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default:
            throw LumenError(.type, "\(function)() expects a number for '\(name)', got \(argument.0.typeName)", at: argument.1)
        }
    }
}
