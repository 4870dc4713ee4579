/// One lexical token of Lumen source.
public struct Token: Sendable, Equatable {
    /// The token's category, with the literal's value where it has one.
    public enum Kind: Sendable, Equatable {
        case identifier(String)
        case keyword(String)
        case integer(Int)
        case float(Double)
        case string(String)
        /// A string literal with `\(…)` interpolations.
        case interpolatedString([StringSegment])
        case symbol(String)
        case newline
        case end
    }

    /// What the token is.
    public var kind: Kind
    /// Where it starts.
    public var location: SourceLocation

    /// Creates a token.
    public init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
    }

    /// A piece of an interpolated string literal.
    public enum StringSegment: Sendable, Equatable {
        /// Literal text.
        case text(String)
        /// The source of an interpolated expression and where it starts.
        case code(String, SourceLocation)
    }

    /// The words the language reserves.
    public static let keywords: Set<String> = [
        "let", "var", "func", "return", "if", "else", "for", "in", "while", "break", "continue",
        "true", "false", "nil",
    ]
}
