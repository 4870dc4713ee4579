import Evaluation
import Foundation
import OrderedJSON
import Synchronization

/// An interpreter's debugger: what a Debug Adapter Protocol client has set (breakpoints, the
/// exception filters, a step), the cells that run and those stopped, and the frames and
/// variables a stop shows.
///
/// Everything is behind one mutex, so the control channel's requests are answered at once
/// while a cell runs or is stopped; a stopped cell waits on a continuation that `resume` — a
/// `continue`, a step, `disconnect` or an interrupt — resumes exactly once. While the debugger
/// is not started, a statement costs one atomic load (`isStarted`).
final class Debugger: Sendable {
    /// The seed of the hash that names a cell's source: ipykernel's, which JupyterLab reads from
    /// `debugInfo`.
    static let hashSeed: UInt32 = 0xC70F_6907
    /// What ends every cell's source path.
    static let sourceSuffix = ".lumen"
    /// How many variable references a session keeps before they are all dropped (a client asks
    /// for them again after each stop).
    static let referenceLimit = 100_000
    /// How many cells' sources a session keeps (`dumpCell`); more are refused.
    static let sourceLimit = 10_000

    /// What begins every cell's source path: a directory of this process in the temporary one.
    let sourcePrefix = NSTemporaryDirectory().appending(NSTemporaryDirectory().hasSuffix("/") ? "" : "/")
        + "lumen_\(ProcessInfo.processInfo.processIdentifier)/"
    /// Whether a client has started the debugger (`initialize`) and not disconnected: statements
    /// check it before anything else.
    let isStarted = Atomic<Bool>(false)
    /// Whether a statement may stop at all: some breakpoint is verified, or a step or a pause is
    /// pending. While it is not, a started debugger costs a statement two atomic loads.
    let isArmed = Atomic<Bool>(false)
    private let state = Mutex(State())

    /// Changes the state under the lock and keeps `isArmed` true to it.
    private func update<Result>(_ change: (inout State) -> Result) -> Result {
        state.withLock { state in
            defer { isArmed.store(state.armed, ordering: .sequentiallyConsistent) }
            return change(&state)
        }
    }

    /// Why a cell stops before a statement.
    enum StopReason: Sendable {
        case breakpoint(id: Int)
        case step
        case pause
        case exception(String)

        /// The reason as the `stopped` event names it.
        var name: String {
            switch self {
            case .breakpoint: "breakpoint"
            case .step: "step"
            case .pause: "pause"
            case .exception: "exception"
            }
        }
    }

    /// What a step asks for: where the cell stops next.
    enum Step: Sendable {
        /// At the next statement anywhere (`stepIn`).
        case into
        /// At the next statement at most `depth` calls deep (`next`).
        case over(depth: Int)
        /// At the next statement fewer than `depth` calls deep (`stepOut`).
        case out(depth: Int)
    }

    /// A breakpoint as the client set it, and whether a statement starts on its line.
    struct Breakpoint: Sendable {
        let id: Int
        let line: Int
        let verified: Bool
        let message: String?
    }

    /// What the Variables panel lists the children of.
    enum Container: Sendable {
        /// A frame's own variables: those of `scope` and its parents, up to the globals.
        case locals(Scope)
        /// The session's variables (built-ins left out).
        case globals
        /// The elements or properties of a value.
        case value(Value)
    }

    /// A cell stopped: its frames (ids into `frames`), where its output goes, and the
    /// continuation that resumes it (nil until it waits).
    private struct StoppedCell {
        let frameIDs: [Int]
        let output: any OutputSink
        var continuation: CheckedContinuation<Void, Never>?
    }

    private struct State {
        var events: (any DebugEventSink)?
        var sequence = 0
        var sources: [String: String] = [:]
        var breakpoints: [String: [Breakpoint]] = [:]
        /// The verified breakpoints' ids by source hash and line: what a statement looks up.
        var stops: [UInt32: [Int: Int]] = [:]
        var exceptionFilters: Set<String> = []
        var nextID = 1
        var running: [Int: String] = [:]
        var nextThread = 1
        var stopped: [Int: StoppedCell] = [:]
        var steps: [Int: Step] = [:]
        var pauses: Set<Int> = []
        var frames: [Int: DebugFrame] = [:]
        var containers: [Int: Container] = [:]

        /// Whether some statement may stop.
        var armed: Bool { !stops.isEmpty || !steps.isEmpty || !pauses.isEmpty }

        mutating func nextSequence() -> Int {
            sequence += 1
            return sequence
        }

        mutating func allocate() -> Int {
            defer { nextID += 1 }
            return nextID
        }
    }

    // MARK: - Sources

    /// The path a cell's source goes by: `sourcePrefix`, the Murmur2 hash of its code, the suffix
    /// (ipykernel's naming, which JupyterLab computes for itself).
    func path(ofCode code: String) -> String {
        path(ofHash: Murmur2.hash(code, seed: Self.hashSeed))
    }

    /// The path of `source`.
    func path(of source: SourceText) -> String {
        path(ofHash: source.hash)
    }

    private func path(ofHash hash: UInt32) -> String {
        sourcePrefix + String(hash) + Self.sourceSuffix
    }

    /// Keeps `code` (Jupyter's `dumpCell`), so breakpoints on it verify and `source` answers;
    /// returns its path, or nil when `sourceLimit` sources are kept already. Sources are kept in
    /// memory, not written to disk.
    func dump(_ code: String) -> String? {
        let path = path(ofCode: code)
        return state.withLock { state in
            guard state.sources[path] != nil || state.sources.count < Self.sourceLimit else { return nil }
            state.sources[path] = code
            return path
        }
    }

    /// The hash a path of this session's sources names, or nil for any other path.
    private func sourceHash(of path: String) -> UInt32? {
        guard path.hasPrefix(sourcePrefix), path.hasSuffix(Self.sourceSuffix) else { return nil }
        return UInt32(path.dropFirst(sourcePrefix.count).dropLast(Self.sourceSuffix.count))
    }

    /// The code dumped as `path`.
    func source(at path: String) -> String? {
        state.withLock { $0.sources[path] }
    }

    // MARK: - Session

    /// Starts the debugger (`initialize`).
    func start() {
        isStarted.store(true, ordering: .sequentiallyConsistent)
    }

    /// Replaces where events go (each request brings the kernel's sink).
    func setEvents(_ events: any DebugEventSink) {
        state.withLock { $0.events = events }
    }

    /// Ends the session (`disconnect`): breakpoints, filters and steps are forgotten and every
    /// stopped cell runs on.
    func stop() {
        isStarted.store(false, ordering: .sequentiallyConsistent)
        let continuations = update { state in
            let waiting = state.stopped.values.compactMap(\.continuation)
            state.breakpoints = [:]
            state.stops = [:]
            state.exceptionFilters = []
            state.steps = [:]
            state.pauses = []
            state.stopped = [:]
            state.frames = [:]
            state.containers = [:]
            return waiting
        }
        for continuation in continuations { continuation.resume() }
    }

    /// The adapter's next message number.
    func nextSequence() -> Int {
        state.withLock { $0.nextSequence() }
    }

    /// Sends event `name` with `body` to the client, if the debugger is started.
    func publish(_ name: String, _ body: OrderedJSON) {
        let delivery: (any DebugEventSink, DebugEvent)? = state.withLock { state in
            guard isStarted.load(ordering: .relaxed), let events = state.events else { return nil }
            return (events, DebugEvent(seq: state.nextSequence(), event: name, body: body))
        }
        if let (events, event) = delivery { events.publish(event) }
    }

    /// What `debugInfo` reports.
    func info() -> OrderedJSON {
        state.withLock { state in
            [
                "isStarted": .bool(isStarted.load(ordering: .relaxed)),
                "hashMethod": "Murmur2",
                "hashSeed": .integer(Int(Self.hashSeed)),
                "tmpFilePrefix": .string(sourcePrefix),
                "tmpFileSuffix": .string(Self.sourceSuffix),
                "breakpoints": .array(state.breakpoints.sorted { $0.key < $1.key }.map { path, breakpoints in
                    ["source": .string(path), "breakpoints": .array(breakpoints.map { ["line": .integer($0.line)] })]
                }),
                "stoppedThreads": .array(state.stopped.keys.sorted().map(OrderedJSON.integer)),
                "richRendering": true,
                "exceptionPaths": ["Lumen Errors"],
                "copyToGlobals": true,
            ]
        }
    }

    // MARK: - Breakpoints

    /// Replaces the breakpoints of `path` with those on `lines`: each verified when the source
    /// was dumped and a statement starts on its line. No lines forget the source too: that is how
    /// a client clears a cell it deleted (JupyterLab dumps a cell again before setting any), so
    /// later breakpoints on it are not verified until it is dumped again.
    func setBreakpoints(_ lines: [Int], in path: String) -> [Breakpoint] {
        let code = source(at: path)
        let statementLines: Set<Int>?
        do {
            statementLines = try code.map { Statement.lines(of: try Parser.parse($0)) }
        } catch {
            statementLines = []
        }
        return update { state in
            let breakpoints = lines.map { line in
                let message: String? = switch statementLines {
                case nil: "no cell with this source has been dumped (dumpCell) in this session"
                case let lines? where !lines.contains(line): "no statement starts on line \(line)"
                default: nil
                }
                return Breakpoint(id: state.allocate(), line: line, verified: message == nil, message: message)
            }
            state.breakpoints[path] = breakpoints.isEmpty ? nil : breakpoints
            if breakpoints.isEmpty { state.sources[path] = nil }
            if let hash = sourceHash(of: path) {
                let verified = breakpoints.filter(\.verified).map { ($0.line, $0.id) }
                state.stops[hash] = verified.isEmpty ? nil : Dictionary(verified, uniquingKeysWith: { first, _ in first })
            }
            return breakpoints
        }
    }

    /// Sets the exception filters (`raised`, `uncaught`): with any, a cell stops where an error
    /// is raised. Lumen has no way to catch an error, so every error raised is uncaught.
    func setExceptionFilters(_ filters: [String]) {
        state.withLock { $0.exceptionFilters = Set(filters) }
    }

    /// Whether a cell stops where an error is raised.
    var stopsOnErrors: Bool {
        state.withLock { !$0.exceptionFilters.isEmpty }
    }

    // MARK: - Threads

    /// Registers a running cell as a thread named `name`; returns its id.
    func threadStarted(name: String) -> Int {
        let thread = state.withLock { state in
            defer { state.nextThread += 1 }
            state.running[state.nextThread] = name
            return state.nextThread
        }
        publish("thread", ["reason": "started", "threadId": .integer(thread)])
        return thread
    }

    /// Forgets a cell that ended.
    func threadEnded(_ thread: Int) {
        update { state in
            state.running[thread] = nil
            state.steps[thread] = nil
            state.pauses.remove(thread)
        }
        publish("thread", ["reason": "exited", "threadId": .integer(thread)])
    }

    /// The running cells, by id.
    func threads() -> [(id: Int, name: String)] {
        state.withLock { $0.running.sorted { $0.key < $1.key }.map { (id: $0.key, name: $0.value) } }
    }

    // MARK: - Stopping

    /// Whether thread `thread` stops before a statement on `line` of `source`, `depth` calls
    /// deep; nil when it runs on. A pause or a step is used up by the stop it causes.
    func stopReason(thread: Int, source: SourceText, line: Int, depth: Int) -> StopReason? {
        update { state in
            if state.pauses.remove(thread) != nil {
                state.steps[thread] = nil
                return .pause
            }
            if let id = state.stops[source.hash]?[line] {
                state.steps[thread] = nil
                return .breakpoint(id: id)
            }
            let stepDone = switch state.steps[thread] {
            case .into?: true
            case .over(let start)?: depth <= start
            case .out(let start)?: depth < start
            case nil: false
            }
            guard stepDone else { return nil }
            state.steps[thread] = nil
            return .step
        }
    }

    /// Asks thread `thread` to stop at its next statement (`pause`).
    func requestPause(_ thread: Int) {
        update { _ = $0.pauses.insert(thread) }
    }

    /// Stops thread `thread` in `frames` (innermost first): tells the client (`stopped`) and
    /// waits until it is resumed. Throws `CancellationError` when the cell is interrupted while
    /// stopped.
    func stop(thread: Int, reason: StopReason, frames: [DebugFrame], output: any OutputSink) async throws {
        state.withLock { state in
            let ids = frames.map { frame in
                let id = state.allocate()
                state.frames[id] = frame
                return id
            }
            state.stopped[thread] = StoppedCell(frameIDs: ids, output: output)
        }
        var body: [(key: String, value: OrderedJSON)] = [
            (key: "reason", value: .string(reason.name)), (key: "threadId", value: .integer(thread)),
            (key: "allThreadsStopped", value: false), (key: "preserveFocusHint", value: false),
        ]
        switch reason {
        case .breakpoint(let id): body.append((key: "hitBreakpointIds", value: [.integer(id)]))
        case .exception(let text): body += [(key: "description", value: .string(text)), (key: "text", value: .string(text))]
        case .step, .pause: break
        }
        publish("stopped", .object(body))
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Resumed already (a `continue` that came first, or an interrupt): run on now.
                let runOn = state.withLock { state in
                    guard !Task.isCancelled, state.stopped[thread] != nil else { return true }
                    state.stopped[thread]?.continuation = continuation
                    return false
                }
                if runOn { continuation.resume() }
            }
        } onCancel: {
            resume(thread, step: nil)
        }
        try Task.checkCancellation()
    }

    /// Resumes thread `thread` if it is stopped, to stop again where `step` says (nil: at the
    /// next breakpoint); returns whether it was stopped.
    @discardableResult
    func resume(_ thread: Int, step: Step?) -> Bool {
        let resumed: (Bool, CheckedContinuation<Void, Never>?) = update { state in
            guard let cell = state.stopped.removeValue(forKey: thread) else { return (false, nil) }
            state.steps[thread] = step
            for id in cell.frameIDs { state.frames[id] = nil }
            if state.stopped.isEmpty { state.containers = [:] }
            return (true, cell.continuation)
        }
        resumed.1?.resume()
        if resumed.0 { publish("continued", ["threadId": .integer(thread), "allThreadsContinued": false]) }
        return resumed.0
    }

    /// The frames of stopped thread `thread`, innermost first, with their ids.
    func frames(of thread: Int) -> [(id: Int, frame: DebugFrame)]? {
        state.withLock { state in
            state.stopped[thread].map { cell in cell.frameIDs.compactMap { id in state.frames[id].map { (id: id, frame: $0) } } }
        }
    }

    /// The frame `id` of a stopped thread, and where that thread's output goes.
    func frame(_ id: Int) -> (frame: DebugFrame, output: any OutputSink)? {
        state.withLock { state in
            guard let frame = state.frames[id], let cell = state.stopped.values.first(where: { $0.frameIDs.contains(id) }) else { return nil }
            return (frame, cell.output)
        }
    }

    /// The depth of thread `thread`'s innermost frame, if it is stopped.
    func depth(of thread: Int) -> Int? {
        state.withLock { state in state.stopped[thread]?.frameIDs.first.flatMap { state.frames[$0]?.depth } }
    }

    // MARK: - Variables

    /// A reference the client expands `container` by.
    func reference(to container: Container) -> Int {
        state.withLock { state in
            if state.containers.count >= Self.referenceLimit { state.containers = [:] }
            let id = state.allocate()
            state.containers[id] = container
            return id
        }
    }

    /// What reference `id` stands for.
    func container(_ id: Int) -> Container? {
        state.withLock { $0.containers[id] }
    }

    /// Forgets the references handed out, unless a stopped cell's are among them (a new
    /// `inspectVariables` replaces the last one's).
    func forgetReferences() {
        state.withLock { state in
            if state.stopped.isEmpty { state.containers = [:] }
        }
    }
}
