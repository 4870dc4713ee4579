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
        case model = "ModelError"
        case interrupted = "Interrupted"
        case cancelled = "Cancelled"
    }

    /// The error's family.
    public var kind: Kind
    /// What went wrong.
    public var message: String
    /// Where, when known.
    public var location: SourceLocation?
    /// For syntax errors: whether more input could complete the code (an open string or bracket).
    public var needsMoreInput: Bool
    /// The user functions the error passed through, innermost first: each function's name, where
    /// it was called, and the source it was defined in.
    public var callChain: [(function: String, location: SourceLocation, definedIn: SourceText)] = []
    /// Whether a debugger has already stopped where the error was raised.
    var seenByDebugger = false

    /// Creates an error.
    public static func == (lhs: LumenError, rhs: LumenError) -> Bool {
        lhs.kind == rhs.kind && lhs.message == rhs.message && lhs.location == rhs.location && lhs.needsMoreInput == rhs.needsMoreInput
            && lhs.callChain.map(\.function) == rhs.callChain.map(\.function) && lhs.callChain.map(\.location) == rhs.callChain.map(\.location)
    }

    public init(_ kind: Kind, _ message: String, at location: SourceLocation? = nil, needsMoreInput: Bool = false) {
        self.kind = kind
        self.message = message
        self.location = location
        self.needsMoreInput = needsMoreInput
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// The error as front ends show it, with a traceback quoting the line of `source` it points at
    /// and a caret under the column.
    public func executionError(in cell: SourceText) -> ExecutionError {
        var traceback: [String] = []
        // Outermost call first, as Python prints it; the error's own place last. A frame's call
        // stands in the source of its caller: the next frame's function, or the cell.
        for index in callChain.indices.reversed() {
            let caller = index + 1 < callChain.count ? callChain[index + 1] : nil
            traceback += (caller?.definedIn ?? cell).quote(callChain[index].location, in: caller?.function)
        }
        if let location {
            traceback += (callChain.first?.definedIn ?? cell).quote(location, in: callChain.first?.function)
        }
        traceback.append(description)
        return ExecutionError(name: kind.rawValue, message: message, traceback: traceback)
    }
}

/// A cell's source and the label tracebacks give it (`Cell In[3]`, or `File "x.lumen"` with the
/// file's line numbers).
public struct SourceText: Sendable {
    /// The label, e.g. `Cell In[3]`.
    public let label: String
    /// The source.
    public let text: String
    /// The line number its first line is shown with.
    public let firstLine: Int
    /// The Murmur2 hash of the text, which names it for the debugger.
    let hash: UInt32

    /// A source labelled `label`, its lines numbered from `firstLine`.
    public init(label: String, text: String, firstLine: Int = 1) {
        self.label = label
        self.text = text
        self.firstLine = firstLine
        hash = Murmur2.hash(text, seed: Debugger.hashSeed)
    }

    /// The source of a cell: `Cell In[n]`, or its place in a script file.
    public init(_ request: ExecutionRequest) {
        self.init(label: Self.label(of: request), text: request.code, firstLine: request.file?.firstLine ?? 1)
    }

    /// How a cell's source is labelled: `Cell In[n]`, or `File "path"` for a script's.
    static func label(of request: ExecutionRequest) -> String {
        request.file.map { "File \"\($0.path)\"" } ?? "Cell In[\(request.executionCount)]"
    }

    /// Traceback lines quoting `location`: where, the line, and a caret under the column.
    func quote(_ location: SourceLocation, in function: String?) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var quoted = ["  \(label), line \(location.line + firstLine - 1)\(function.map { ", in \($0)()" } ?? "")"]
        if location.line >= 1, location.line <= lines.count {
            let line = lines[location.line - 1]
            quoted.append("    " + line)
            quoted.append("    " + String(line.prefix(max(0, location.column - 1)).map { $0 == "\t" ? "\t" : " " }) + "^")
        }
        return quoted
    }
}
