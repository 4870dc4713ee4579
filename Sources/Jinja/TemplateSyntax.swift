/// An expression inside a tag.
indirect enum Expression: Sendable {
    case literal(TemplateValue)
    case name(String, SourcePosition)
    case list([Expression])
    case dictionary([(key: Expression, value: Expression)], SourcePosition)
    case attribute(Expression, String, SourcePosition)
    case `subscript`(Expression, Expression, SourcePosition)
    case slice(Expression, start: Expression?, stop: Expression?, step: Expression?, SourcePosition)
    case call(Expression, Arguments, SourcePosition)
    case filter(Expression, name: String, Arguments, SourcePosition)
    case test(Expression, name: String, Arguments, negated: Bool, SourcePosition)
    case negate(Expression, SourcePosition)
    case `not`(Expression)
    case binary(String, Expression, Expression, SourcePosition)
    case compare(Expression, [(symbol: String, operand: Expression)], SourcePosition)
    case and(Expression, Expression)
    case or(Expression, Expression)
    case conditional(then: Expression, condition: Expression, otherwise: Expression?)
}

/// The arguments of a call, filter or test.
struct Arguments: Sendable {
    var positional: [Expression] = []
    var keywords: [(name: String, value: Expression)] = []
}

/// A macro's or call block's parameter.
struct Parameter: Sendable {
    let name: String
    let defaultValue: Expression?
}

/// What `{% set %}` assigns to.
enum AssignmentTarget: Sendable {
    /// One name, or several unpacked from a sequence.
    case names([String])
    /// `namespace.attribute`.
    case attribute(String, String)
}

/// A node of a parsed template.
indirect enum Node: Sendable {
    case text(String)
    case output(Expression)
    case conditional(branches: [(condition: Expression, body: [Node])], otherwise: [Node])
    case loop(targets: [String], iterable: Expression, filter: Expression?, body: [Node], otherwise: [Node], SourcePosition)
    case assign(AssignmentTarget, Expression, SourcePosition)
    case assignBlock(String, filters: [(name: String, arguments: Arguments, position: SourcePosition)], body: [Node])
    case macro(String, [Parameter], body: [Node])
    case callBlock(Expression, [Parameter], body: [Node], SourcePosition)
    case filterBlock([(name: String, arguments: Arguments, position: SourcePosition)], body: [Node])
    case breakLoop
    case continueLoop
}
