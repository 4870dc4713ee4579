import Evaluation

/// An error raised while lexing, parsing or running Lumen code, with the place it points at.
public struct LumenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The family of an error, shown as its name.
    public enum Kind: String, Sendable {
        case syntax = "SyntaxError"
        case name = "NameError"
        case type = "TypeError"
        case value = "ValueError"
        case index = "IndexError"
        case assertion = "AssertionError"
        case input = "InputError"
        case interrupted = "Interrupted"
    }

    /// The error's family.
    public var kind: Kind
    /// What went wrong.
    public var message: String
    /// Where, when known.
    public var location: SourceLocation?
    /// For syntax errors: whether more input could complete the code (an open string or bracket).
    public var needsMoreInput: Bool

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, at location: SourceLocation? = nil, needsMoreInput: Bool = false) {
        self.kind = kind
        self.message = message
        self.location = location
        self.needsMoreInput = needsMoreInput
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// The error as front ends show it, with a traceback quoting the line of `source` it points at
    /// and a caret under the column.
    public func executionError(source: String, cellLabel: String) -> ExecutionError {
        var traceback: [String] = []
        if let location {
            let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
            traceback.append("  \(cellLabel), line \(location.line)")
            if location.line >= 1, location.line <= lines.count {
                let line = lines[location.line - 1]
                traceback.append("    " + line)
                let indent = String(line.prefix(max(0, location.column - 1)).map { $0 == "\t" ? "\t" : " " })
                traceback.append("    " + indent + "^")
            }
        }
        traceback.append(description)
        return ExecutionError(name: kind.rawValue, message: message, traceback: traceback)
    }
}
