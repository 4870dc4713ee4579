/// An expression in a Lumen program, with the place it starts.
public indirect enum Expression: Sendable {
    case literal(Value, SourceLocation)
    /// A string with interpolated expressions: text and expressions, in order.
    case interpolation([InterpolationPart], SourceLocation)
    case identifier(String, SourceLocation)
    /// `$0`, `$1`, … inside a closure without named parameters.
    case shorthandArgument(Int, SourceLocation)
    case array([Expression], SourceLocation)
    case dictionary([(key: Expression, value: Expression)], SourceLocation)
    /// `-x` or `!x`.
    case unary(String, Expression, SourceLocation)
    /// `a op b`, with the operator's location.
    case binary(String, Expression, Expression, SourceLocation)
    /// `condition ? a : b`.
    case ternary(Expression, Expression, Expression, SourceLocation)
    /// `callee(arguments)`, a trailing closure included as the last argument.
    case call(callee: Expression, arguments: [Argument], SourceLocation)
    /// `base.name`.
    case member(Expression, String, SourceLocation)
    /// `base[index]`; `base[i, j, …]` has `.indices` as its index.
    case subscripted(Expression, Expression, SourceLocation)
    /// The items of a subscript of several (`t[0, 1..<3, -1]`), one per axis.
    case indices([Expression], SourceLocation)
    /// `{ a, b in … }` or `{ … $0 … }`.
    case closure(Closure, SourceLocation)

    /// Where the expression starts (for a binary operator, where the operator is).
    public var location: SourceLocation {
        switch self {
        case .literal(_, let location), .interpolation(_, let location), .identifier(_, let location),
             .shorthandArgument(_, let location), .array(_, let location), .dictionary(_, let location),
             .unary(_, _, let location), .binary(_, _, _, let location), .ternary(_, _, _, let location),
             .call(_, _, let location), .member(_, _, let location), .subscripted(_, _, let location),
             .indices(_, let location), .closure(_, let location):
            location
        }
    }
}

/// A part of an interpolated string.
public enum InterpolationPart: Sendable {
    case text(String)
    case expression(Expression)
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

/// A parameter of a function: positional or labelled, with an optional default.
public struct Parameter: Sendable {
    /// The label callers write, or nil for a positional parameter.
    public var label: String?
    /// The name inside the body.
    public var name: String
    /// The default value's expression, if any.
    public var defaultValue: Expression?
}

/// A function's or closure's parameters and body.
public struct Closure: Sendable {
    /// The parameters; a closure using `$0` has none declared.
    public var parameters: [Parameter]
    /// The statements of the body.
    public var body: [Statement]
}

/// A statement in a Lumen program.
public indirect enum Statement: Sendable {
    /// An expression evaluated for its effect or value.
    case expression(Expression)
    /// `let name = value` or `var name = value`.
    case declaration(name: String, constant: Bool, value: Expression?, SourceLocation)
    /// `target = value` or `target op= value` (`op` is `+`, `-`, `*` or `/`).
    case assignment(target: Expression, operator: String?, value: Expression, SourceLocation)
    /// `if` with its `else if` branches and an optional `else`.
    case conditional(branches: [(condition: Expression, body: [Statement])], otherwise: [Statement]?)
    /// `for name in sequence { … }`, or `for (a, b) in …` to unpack pairs.
    case forIn(names: [String], sequence: Expression, body: [Statement], SourceLocation)
    /// `while condition { … }`.
    case whileLoop(condition: Expression, body: [Statement])
    case breakLoop(SourceLocation)
    case continueLoop(SourceLocation)
    /// `return` with an optional value.
    case returnValue(Expression?, SourceLocation)
    /// `func name(parameters) { body }`.
    case function(name: String, Closure, SourceLocation)
}
