import Evaluation
import Executors
import Foundation

/// Runs Lumen cells, keeping their state (variables, functions, history) from one cell to the
/// next, and answers completion, inspection and history questions about them.
///
/// Every statement and every loop iteration is a cancellation point: cancelling the task that
/// calls `execute` interrupts the cell with an `Interrupted` error. The actor runs on a thread of
/// its own, so a long-running cell never occupies Swift's cooperative pool.
public actor Interpreter: Evaluator {
    private let executor = ThreadExecutor(name: "lumen-interpreter")
    /// The interpreter's dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let globals = Scope(parent: nil)
    /// The debugger JupyterLab's debug requests drive.
    let debugger = Debugger()
    /// What built-ins keep from cell to cell.
    let state: SessionState
    /// This session's history, in memory; earlier sessions come from `store`.
    private(set) var historyEntries: [HistoryEntry] = []
    private var store: HistoryStore?
    private var session: Int
    /// How deeply user functions may call each other.
    static let maximumCallDepth = 500

    /// Creates an interpreter with the standard library and `libraries` loaded (the model host's,
    /// say), recording history in `store` (in memory only when nil).
    public init(libraries: [any LumenLibrary] = [], history store: HistoryStore? = nil) {
        self.store = store
        state = SessionState(libraries: libraries)
        session = store?.session ?? 1
        Self.declareBuiltins(of: state, in: globals)
    }

    /// Declares every built-in of the session as a constant of `scope`.
    private static func declareBuiltins(of state: SessionState, in scope: Scope) {
        for builtin in state.builtins.values {
            scope.declare(builtin.name, .builtin(builtin), constant: true)
        }
    }

    /// Starts keeping history in `store` (opened after start-up, off its path): this session's
    /// entries so far move into the store's session and are written too.
    public func attachHistory(_ store: HistoryStore) {
        self.store = store
        session = store.session
        historyEntries = historyEntries.map { HistoryEntry(session: store.session, line: $0.line, input: $0.input) }
        for entry in historyEntries { store.record(entry) }
    }

    /// Writes what the libraries recorded (the run log) and the history; returns when they are
    /// on disk.
    public func flushRecords() async {
        for library in state.libraries { await library.flush() }
        await store?.flush()
    }

    /// Forgets every variable and function, keeping the built-ins.
    func resetGlobals() {
        globals.removeAll()
        Self.declareBuiltins(of: state, in: globals)
    }

    public func execute(_ request: ExecutionRequest, output: any OutputSink) async throws(ExecutionError) {
        let thread = debugger.threadStarted(name: SourceText.label(of: request))
        defer { debugger.threadEnded(thread) }
        let cell = RunningCell(origin: CellOrigin(executionCount: request.executionCount, cellID: request.cellID), thread: thread)
        do {
            try await RunningCell.$current.withValue(cell) {
                try await run(request, output: output)
            }
        } catch let error as ExecutionError {
            throw error
        } catch {
            throw ExecutionError(name: "InternalError", message: "\(error)", traceback: ["InternalError: \(error)"])
        }
    }

    /// Runs a cell in its `RunningCell`.
    private func run(_ request: ExecutionRequest, output: any OutputSink) async throws(ExecutionError) {
        if request.storeHistory {
            let entry = HistoryEntry(session: session, line: request.executionCount, input: request.code)
            historyEntries.append(entry)
            store?.record(entry)
        }
        do {
            if try await runSpecial(request, output: output) { return }
            try await executeStatements(request, output: output)
        } catch let error as LumenError {
            throw error.executionError(in: SourceText(request))
        } catch is CancellationError {
            throw .interrupted
        } catch let flow as ControlFlow {
            let (word, location): (String, SourceLocation?) = switch flow {
            case .breakLoop(let location): ("break", location)
            case .continueLoop(let location): ("continue", location)
            case .returnValue: ("return", nil)
            }
            throw LumenError(.syntax, "'\(word)' outside of \(word == "return" ? "a function" : "a loop")", at: location)
                .executionError(in: SourceText(request))
        } catch {
            throw ExecutionError(name: "InternalError", message: "\(error)", traceback: ["InternalError: \(error)"])
        }
    }

    /// Runs a cell's statements; the last bare expression's value is the result.
    func executeStatements(_ request: ExecutionRequest, output: any OutputSink) async throws {
        let statements = try Parser.parse(request.code)
        var lastValue = Value.null
        var context = RunContext(output: output, depth: 0, source: SourceText(request))
        for statement in statements {
            try Task.checkCancellation()
            lastValue = try await run(statement, in: globals, context: &context)
        }
        // A value the cell already showed live (a generation) is not shown a second time; it is
        // still the cell's value for code.
        if RunningCell.current.wasShownLive(lastValue) { return }
        if !request.silent, !lastValue.isNull {
            output.executeResult(lastValue.mimeBundle)
        }
    }

    // MARK: - Questions about code

    /// The names `let`, `var`, `func` and `for` declare in the text, so completion offers them
    /// before the cell has run.
    static func declaredNames(in text: String) -> Set<String> {
        let declaration = /(?:\blet|\bvar|\bfunc|\bfor)\s+([A-Za-z_][A-Za-z0-9_]*)/
        return Set(text.matches(of: declaration).map { String($0.output.1) })
    }

    public func complete(_ code: String, cursor: Int) async -> Completion {
        let scalars = Array(code.unicodeScalars)
        let end = min(max(cursor, 0), scalars.count)
        var start = end
        while start > 0, Self.isIdentifierScalar(scalars[start - 1]) { start -= 1 }
        let before = String(String.UnicodeScalarView(scalars[..<end]))
        // A library's own completion (the file names inside `load("`) comes first.
        for library in state.libraries {
            if let offered = library.completion(before: before) {
                return Completion(matches: offered.candidates, start: end - offered.partial.unicodeScalars.count, end: end)
            }
        }
        let prefix = String(String.UnicodeScalarView(scalars[start..<end]))
        var candidates = Set(globals.names.keys).union(Token.keywords).union(Self.declaredNames(in: before))
        if let callee = Self.calleeAtArgumentStart(Array(scalars[..<start])) {
            candidates.formUnion(argumentLabels(of: callee).map { $0 + ":" })
        }
        if start > 0, scalars[start - 1] == "." {
            // After `name.`, `"literal".` or `[…].`, the members of the value's runtime type.
            var nameStart = start - 1
            while nameStart > 0, Self.isIdentifierScalar(scalars[nameStart - 1]) { nameStart -= 1 }
            let receiver = String(String.UnicodeScalarView(scalars[nameStart..<(start - 1)]))
            let value = globals.lookup(receiver)
            let typeName: String? = switch start > 1 ? scalars[start - 2] : " " {
            case "\"": "String"
            case "]": "Array"
            default: value?.typeName
            }
            if case .host(let object)? = value {
                candidates = Set(object.members.names)
            } else {
                candidates = Set(typeName.flatMap { Methods.members[$0]?.names } ?? [])
            }
        }
        return Completion(matches: candidates.filter { $0.hasPrefix(prefix) }.sorted(), start: start, end: end)
    }

    /// When the text ends where an argument starts (after `(` or `,` of an open call), the
    /// called name (`generate` in `generate(m, ` and in `m.generate(`).
    static func calleeAtArgumentStart(_ scalars: [Unicode.Scalar]) -> String? {
        var index = scalars.count
        while index > 0, scalars[index - 1] == " " { index -= 1 }
        guard index > 0, scalars[index - 1] == "(" || scalars[index - 1] == "," else { return nil }
        var depth = 0
        var inString = false
        while index > 0 {
            index -= 1
            let scalar = scalars[index]
            if scalar == "\"" { inString.toggle() }
            if inString { continue }
            switch scalar {
            case ")", "]", "}": depth += 1
            case "[", "{":
                if depth == 0 { return nil }
                depth -= 1
            case "(":
                if depth > 0 {
                    depth -= 1
                    continue
                }
                var nameStart = index
                while nameStart > 0, isIdentifierScalar(scalars[nameStart - 1]) { nameStart -= 1 }
                return nameStart < index ? String(String.UnicodeScalarView(scalars[nameStart..<index])) : nil
            default: break
            }
        }
        return nil
    }

    /// The argument labels a built-in or a function of this session takes.
    private func argumentLabels(of name: String) -> [String] {
        switch globals.lookup(name) {
        case .builtin(let builtin)?: builtin.labels
        case .function(let function)?: function.closure.parameters.compactMap(\.label)
        default: []
        }
    }

    public func inspect(_ code: String, cursor: Int, detailLevel: Int) async -> MIMEBundle? {
        let scalars = Array(code.unicodeScalars)
        var start = min(max(cursor, 0), scalars.count)
        var end = start
        while start > 0, Self.isIdentifierScalar(scalars[start - 1]) { start -= 1 }
        while end < scalars.count, Self.isIdentifierScalar(scalars[end]) { end += 1 }
        if start == end, start > 0, scalars[start - 1] == "(" {
            return await inspect(code, cursor: start - 1, detailLevel: detailLevel)
        }
        let name = String(String.UnicodeScalarView(scalars[start..<end]))
        guard let value = globals.lookup(name) else { return nil }
        return DisplayLibrary.documentation(of: value, name: name)
    }

    public func completeness(of code: String) async -> Completeness {
        if Self.helpRequestName(in: code) != nil { return .complete }
        if let magic = Self.magicCompleteness(of: code) { return magic }
        do {
            _ = try Parser.parse(code)
            return .complete
        } catch {
            guard error.needsMoreInput else { return .invalid }
            let openBlocks = code.filter { $0 == "{" }.count - code.filter { $0 == "}" }.count
            return .incomplete(indent: String(repeating: "    ", count: max(0, openBlocks)))
        }
    }

    public func history(_ query: HistoryQuery) async -> [HistoryEntry] {
        let all = (store?.earlierEntries ?? []) + historyEntries
        switch query {
        case .tail(let count):
            return Array(all.suffix(max(0, count)))
        case .range(let requested, let start, let stop):
            // 0 is this session, negative numbers count back from it.
            let wanted = requested <= 0 ? session + requested : requested
            return all.filter { entry in entry.session == wanted && entry.line >= start && (stop.map { entry.line < $0 } ?? true) }
        case .search(let pattern, let count, let unique):
            var seen: Set<String> = []
            var found: [HistoryEntry] = []
            for entry in all.reversed() where fnmatch(pattern, entry.input, 0) == 0 {
                guard !unique || seen.insert(entry.input).inserted else { continue }
                found.append(entry)
            }
            found.reverse()
            if let count { found = Array(found.suffix(max(0, count))) }
            return found
        }
    }

    private static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
    }
}

/// What running code needs besides its scope: where output goes and how deep calls are.
struct RunContext: Sendable {
    var output: any OutputSink
    var depth: Int
    /// The source of the code running (a cell, or the cell a function was written in).
    var source: SourceText
    /// The arguments of the innermost closure, for `$0`, `$1`, ….
    var shorthandArguments: [Value] = []
    /// The function running (nil: the cell's own statements), for the debugger's call stack.
    var function: String?
    /// The frames that called it, innermost first; recorded only while the debugger is started.
    var callers: CallerFrames?
    /// The scope of the call being made; recorded only while the debugger is started, so the
    /// callee's stack can show its caller's variables.
    var callScope: Scope?
}
