/// Why a grammar, JSON schema or regular expression cannot constrain a generation: what is
/// wrong and where (a line and column of the text, or a JSON pointer into the schema).
public struct GrammarError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in its source the problem is.
    public enum Location: Sendable, Equatable {
        /// A 1-based line and column (in characters) of the text.
        case text(line: Int, column: Int)
        /// A JSON pointer into the schema (`/properties/age`; empty for the whole schema).
        case schema(pointer: String)
        /// The whole source.
        case whole
    }

    /// What the source is: "grammar", "JSON schema", "regex", "choice".
    public let source: String
    /// Where the problem is.
    public let location: Location
    /// What is wrong.
    public let reason: String

    /// A problem with `source` at `location`.
    public init(_ source: String, at location: Location, _ reason: String) {
        self.source = source
        self.location = location
        self.reason = reason
    }

    /// Whether this is `cancelled`: the grammar's compilation stopped because it was no longer wanted.
    public var isCancellation: Bool { reason == Self.cancellationReason }

    /// Compiling `source` stopped because whoever asked for it went away.
    public static func cancelled(_ source: String) -> GrammarError {
        GrammarError(source, at: .whole, cancellationReason)
    }

    private static let cancellationReason = "compilation was cancelled"

    public var description: String {
        switch location {
        case .text(let line, let column): "\(source), line \(line), column \(column): \(reason)"
        case .schema(let pointer): "\(source) at \(pointer.isEmpty ? "its root" : pointer): \(reason)"
        case .whole: "\(source): \(reason)"
        }
    }
}
