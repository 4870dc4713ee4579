/// An expression in a Lumen program.
public indirect enum Expression: Sendable {
    /// A literal value.
    case literal(Value, SourceLocation)
    /// A name to look up.
    case identifier(String, SourceLocation)
    /// A call `callee(arguments)`.
    case call(callee: Expression, arguments: [Argument], SourceLocation)
    /// Unary minus.
    case negate(Expression, SourceLocation)

    /// Where the expression starts.
    public var location: SourceLocation {
        switch self {
        case .literal(_, let location), .identifier(_, let location), .call(_, _, let location), .negate(_, let location):
            location
        }
    }
}

/// One argument of a call, optionally labelled (`temperature: 0.8`).
public struct Argument: Sendable {
    /// The label, if any.
    public var label: String?
    /// The argument's expression.
    public var value: Expression

    /// Creates an argument.
    public init(label: String?, value: Expression) {
        self.label = label
        self.value = value
    }
}

/// A statement in a Lumen program.
public enum Statement: Sendable {
    /// An expression evaluated for its effect or value.
    case expression(Expression)
}
