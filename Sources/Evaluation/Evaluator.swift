/// A cell to run and how.
public struct ExecutionRequest: Sendable, Equatable {
    /// The cell's source.
    public var code: String
    /// The execution count shown for the cell.
    public var executionCount: Int
    /// Whether the cell is recorded in history.
    public var storeHistory: Bool
    /// Whether the cell runs silently (no result is published).
    public var silent: Bool
    /// The cell's id in its notebook, when the front end says (Jupyter's `cellId` metadata).
    public var cellID: String?
    /// Where the code stands in a script file, so errors name the file and its line.
    public var file: ScriptPosition?

    /// Creates a request.
    public init(code: String, executionCount: Int, storeHistory: Bool = true, silent: Bool = false, cellID: String? = nil,
                file: ScriptPosition? = nil) {
        self.code = code
        self.executionCount = executionCount
        self.storeHistory = storeHistory
        self.silent = silent
        self.cellID = cellID
        self.file = file
    }
}

/// Where a cell's code stands in a script (`lumen repl script.lumen`).
public struct ScriptPosition: Sendable, Equatable {
    /// The file as the user named it (`<stdin>` for a piped script).
    public var path: String
    /// The file's line that is the cell's first line (1 is the first).
    public var firstLine: Int

    /// Creates a position.
    public init(path: String, firstLine: Int) {
        self.path = path
        self.firstLine = firstLine
    }
}

/// Completion candidates for the text before a cursor.
public struct Completion: Sendable, Equatable {
    /// The candidates.
    public var matches: [String]
    /// Start of the text the candidates replace, in Unicode code points.
    public var start: Int
    /// End of the text the candidates replace, in Unicode code points.
    public var end: Int

    /// Creates a completion.
    public init(matches: [String], start: Int, end: Int) {
        self.matches = matches
        self.start = start
        self.end = end
    }
}

/// Whether a piece of code can run as it is.
public enum Completeness: Sendable, Equatable {
    /// Ready to run.
    case complete
    /// Needs more lines; the next should start with `indent`.
    case incomplete(indent: String)
    /// A syntax error that more input cannot fix.
    case invalid
}

/// One entry of execution history.
public struct HistoryEntry: Sendable, Equatable {
    /// The session the entry belongs to (1 is the first).
    public var session: Int
    /// The execution count within the session.
    public var line: Int
    /// The cell's source.
    public var input: String

    /// Creates an entry.
    public init(session: Int, line: Int, input: String) {
        self.session = session
        self.line = line
        self.input = input
    }
}

/// Which history entries to return.
public enum HistoryQuery: Sendable, Equatable {
    /// The last `count` entries.
    case tail(count: Int)
    /// Lines `start..<stop` of `session` (0 is the current session, negative counts back;
    /// a nil `stop` runs to the end).
    case range(session: Int, start: Int, stop: Int?)
    /// The last `count` entries whose input matches the glob `pattern`, without repeats if `unique`.
    case search(pattern: String, count: Int?, unique: Bool)
}

/// Runs cells and answers the questions front ends ask about code. The Jupyter kernel, the
/// terminal REPL and the notebook runner drive an evaluator through this protocol.
///
/// `execute` runs in the calling task: cancelling that task interrupts the cell.
public protocol Evaluator: Sendable {
    /// Runs a cell, publishing its output to `output`; throws the error that ended it.
    func execute(_ request: ExecutionRequest, output: any OutputSink) async throws(ExecutionError)
    /// Completion candidates at `cursor` (in Unicode code points).
    func complete(_ code: String, cursor: Int) async -> Completion
    /// Documentation for what stands at `cursor`, or nil when nothing is known.
    func inspect(_ code: String, cursor: Int, detailLevel: Int) async -> MIMEBundle?
    /// Whether `code` is ready to run.
    func completeness(of code: String) async -> Completeness
    /// Execution history.
    func history(_ query: HistoryQuery) async -> [HistoryEntry]
    /// Takes a comm message from the front end (a widget's new value, a click); what it
    /// publishes goes to `output`, whose parent is that message. It returns once the message is
    /// handled, so messages are taken in order.
    func receive(_ message: CommMessage, output: any OutputSink) async
    /// The comms open now (id → target name), only those of `target` when given.
    func openComms(target: String?) async -> [String: String]
    /// Whether `debug` answers the Debug Adapter Protocol (the kernel advertises a debugger).
    var hasDebugger: Bool { get }
    /// Answers a Debug Adapter Protocol request (Jupyter's `debug_request`); what the debugger
    /// tells unasked (a cell stopped at a breakpoint) goes to `events`. Returns promptly even
    /// while a cell runs or is stopped.
    func debug(_ request: DebugRequest, events: any DebugEventSink) async -> DebugResponse
}

extension Evaluator {
    /// An evaluator without comms answers as ipykernel does with no target registered: a comm
    /// opened is closed at once, and a message for any other comm names the unknown comm.
    public func receive(_ message: CommMessage, output: any OutputSink) async {
        CommMessage.refuse(message, output: output)
    }

    /// An evaluator without comms has none open.
    public func openComms(target: String?) async -> [String: String] { [:] }

    /// Most evaluators have no debugger.
    public var hasDebugger: Bool { false }

    /// An evaluator without a debugger refuses every request, naming it.
    public func debug(_ request: DebugRequest, events: any DebugEventSink) async -> DebugResponse {
        DebugResponse(seq: 0, requestSeq: request.seq, success: false, command: request.command,
                      message: "this kernel has no debugger ('\(request.command)' not handled)")
    }
}
