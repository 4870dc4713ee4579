/// An error from parsing or rendering a template, in jinja2's terms: the kind
/// (`TemplateSyntaxError`, `UndefinedError`, `TypeError`, `TemplateError` for
/// `raise_exception`), jinja2's message, and where in the template it happened.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// jinja2's exception class name.
    public var kind: String
    /// The message, as jinja2 words it (for `raise_exception`, the template's own message).
    public var message: String
    /// The 1-based line in the template, when known.
    public var line: Int?
    /// The 1-based column in the template, when known.
    public var column: Int?

    /// Creates an error.
    public init(kind: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
    }

    /// "Kind: message", the way Python prints the exception.
    public var summary: String { "\(kind): \(message)" }

    public var description: String {
        guard let line else { return summary }
        return "\(summary) (template line \(line)" + (column.map { ", column \($0)" } ?? "") + ")"
    }

    static func syntax(_ message: String, at position: SourcePosition) -> TemplateError {
        TemplateError(kind: "TemplateSyntaxError", message: message, line: position.line, column: position.column)
    }
}

/// A place in a template's source.
struct SourcePosition: Sendable, Equatable {
    var line: Int
    var column: Int
}
