import Evaluation
import Foundation
import JupyterProtocol
import Synchronization

/// Records what cells publish as nbformat outputs, the way Jupyter stores them: consecutive
/// streams of one name merged, display updates applied to every output shown under their id (the
/// notebook keeps each display's final state), `clear_output` honoured. Optionally echoes text
/// to stderr as it arrives.
///
/// Each cell writes through its own view (`sink(for:)`), so output that arrives later (from a
/// background job) still lands in the cell that started it.
public final class NotebookOutputs: Sendable {
    /// One cell's view of the outputs.
    public struct CellSink: OutputSink {
        let outputs: NotebookOutputs
        let cell: Int

        public func stream(_ stream: StandardStream, _ text: String) { outputs.stream(stream, text, cell: cell) }
        public func display(_ bundle: MIMEBundle, displayID: String?) { outputs.display(bundle, displayID: displayID, cell: cell) }
        public func updateDisplay(_ bundle: MIMEBundle, displayID: String) { outputs.updateDisplay(bundle, displayID: displayID) }
        public func progress(_ bundle: MIMEBundle, id: String, finished: Bool) { outputs.progress(bundle, id: id, finished: finished, cell: cell) }
        public func clearOutput(wait: Bool) { outputs.clearOutput(wait: wait, cell: cell) }
        public func executeResult(_ bundle: MIMEBundle) { outputs.executeResult(bundle, cell: cell) }
        public func error(_ error: ExecutionError) { outputs.error(error, cell: cell) }
        public func page(_ bundle: MIMEBundle) { outputs.echoText((bundle.plainText ?? "") + "\n") }

        public func requestInput(prompt: String, password: Bool) async throws -> String {
            throw InputUnavailableError(reason: "a notebook run cannot ask for input")
        }
    }

    private struct State {
        var outputs: [[JSONValue]]
        var clearPending: Set<Int> = []
        var displays: [String: [(cell: Int, output: Int)]] = [:]
        var echoed: [String: String] = [:]
        /// The display echoed last (nil for streams), and whether the echo ended a line.
        var lastEchoedID: String?
        var echoAtLineStart = true
    }

    private let state: Mutex<State>
    private let echo: Bool
    /// Whether the echo goes to a terminal, where a progress bar is redrawn in place.
    private let echoRedraws = isatty(STDERR_FILENO) != 0

    /// A sink for a notebook of `cellCount` cells; with `echo`, text is also written to stderr.
    public init(cellCount: Int, echo: Bool) {
        state = Mutex(State(outputs: Array(repeating: [], count: cellCount)))
        self.echo = echo
    }

    /// The sink cell `index` writes through; the cell starts with no outputs.
    public func sink(for index: Int) -> CellSink {
        state.withLock { state in
            state.outputs[index] = []
            state.clearPending.remove(index)
        }
        return CellSink(outputs: self, cell: index)
    }

    /// The outputs recorded for cell `index`.
    public func outputs(of index: Int) -> [JSONValue] {
        state.withLock { $0.outputs[index] }
    }

    private func append(_ output: JSONValue, displayID: String? = nil, cell: Int) {
        state.withLock { state in
            if state.clearPending.remove(cell) != nil { state.outputs[cell] = [] }
            state.outputs[cell].append(output)
            if let displayID { state.displays[displayID, default: []].append((cell, state.outputs[cell].count - 1)) }
        }
    }

    /// Echoes `text` to stderr: for display `id`, only what it adds to what that display showed
    /// before; with `redraw`, as it is (a progress bar's `\r` redraws its own line).
    fileprivate func echoText(_ text: String, id: String? = nil, redraw: Bool = false) {
        guard echo else { return }
        let delta: String = state.withLock { state in
            // Output after a display other than its own update starts on a new line, and so
            // does a progress bar after anything else.
            let after = redraw ? state.lastEchoedID != id : state.lastEchoedID != nil && state.lastEchoedID != id
            let lineBreak = after && !state.echoAtLineStart ? "\n" : ""
            var delta = text
            if let id, !redraw {
                if let previous = state.echoed[id] {
                    delta = text.hasPrefix(previous) ? String(text.dropFirst(previous.count)) : "\n" + text
                }
                state.echoed[id] = text
            }
            delta = lineBreak + delta
            state.lastEchoedID = id
            if let last = delta.last { state.echoAtLineStart = last == "\n" }
            return delta
        }
        FileHandle.standardError.write(Data(delta.utf8))
    }

    fileprivate func stream(_ stream: StandardStream, _ text: String, cell: Int) {
        echoText(text)
        record(stream, text, cell: cell)
    }

    /// Adds `text` to the cell's outputs, merged into the last output if that is a stream of
    /// the same name.
    private func record(_ stream: StandardStream, _ text: String, cell: Int) {
        state.withLock { state in
            if state.clearPending.remove(cell) != nil { state.outputs[cell] = [] }
            if case .object(var last)? = state.outputs[cell].last, last["output_type"] == .string("stream"),
               last["name"] == .string(stream.rawValue), case .array(let lines)? = last["text"] {
                let merged = lines.compactMap(\.stringValue).joined() + text
                last["text"] = .array(NotebookDocument.lines(merged).map { .string($0) })
                state.outputs[cell][state.outputs[cell].count - 1] = .object(last)
            } else {
                state.outputs[cell].append(.object([
                    "output_type": .string("stream"), "name": .string(stream.rawValue),
                    "text": .array(NotebookDocument.lines(text).map { .string($0) }),
                ]))
            }
        }
    }

    fileprivate func display(_ bundle: MIMEBundle, displayID: String?, cell: Int) {
        echoText((bundle.plainText ?? "") + (displayID == nil ? "\n" : ""), id: displayID)
        append(.object(["output_type": .string("display_data"), "data": Self.data(bundle), "metadata": .object([:])]), displayID: displayID, cell: cell)
    }

    fileprivate func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        echoText(bundle.plainText ?? "", id: displayID)
        state.withLock { state in
            for place in state.displays[displayID] ?? [] where place.output < state.outputs[place.cell].count {
                if case .object(var output) = state.outputs[place.cell][place.output] {
                    output["data"] = Self.data(bundle)
                    state.outputs[place.cell][place.output] = .object(output)
                }
            }
        }
    }

    /// A progress indicator is stored as a Jupyter kernel sends it, stream text whose states
    /// each start with `\r` (so this notebook and nbclient's agree, and front ends show the last
    /// state). On a terminal every state is echoed, redrawn in place; in a log (stderr not a
    /// terminal) only the finished one, so a CI log gets one line per bar.
    fileprivate func progress(_ bundle: MIMEBundle, id: String, finished: Bool, cell: Int) {
        let text = bundle.plainText ?? ""
        if echoRedraws || finished {
            // On a terminal: back to the line's start, clear it, draw the new state.
            echoText(echoRedraws ? "\r\u{1B}[K" + text + (finished ? "\n" : "") : text + "\n", id: id, redraw: true)
        }
        record(.stdout, "\r" + text + (finished ? "\n" : ""), cell: cell)
    }

    fileprivate func clearOutput(wait: Bool, cell: Int) {
        state.withLock { state in
            if wait {
                state.clearPending.insert(cell)
            } else {
                state.outputs[cell] = []
            }
        }
    }

    fileprivate func executeResult(_ bundle: MIMEBundle, cell: Int) {
        echoText((bundle.plainText ?? "") + "\n")
        append(.object(["output_type": .string("execute_result"), "data": Self.data(bundle), "metadata": .object([:]), "execution_count": .null]), cell: cell)
    }

    /// Sets the execution count of the cell's `execute_result` outputs.
    public func setExecutionCount(_ count: Int, cell index: Int) {
        state.withLock { state in
            state.outputs[index] = state.outputs[index].map { output in
                guard case .object(var fields) = output, fields["output_type"] == .string("execute_result") else { return output }
                fields["execution_count"] = .int(count)
                return .object(fields)
            }
        }
    }

    fileprivate func error(_ error: ExecutionError, cell: Int) {
        append(.object([
            "output_type": .string("error"), "ename": .string(error.name), "evalue": .string(error.message),
            "traceback": .array(error.traceback.map { .string($0) }),
        ]), cell: cell)
    }

    /// A MIME bundle as nbformat stores it: text as lists of lines, JSON types as JSON.
    static func data(_ bundle: MIMEBundle) -> JSONValue {
        .object(bundle.data.reduce(into: [:]) { data, entry in
            if MIMEBundle.isJSON(entry.key), let json = JSONValue(parsing: entry.value) {
                data[entry.key] = json
            } else {
                data[entry.key] = .array(NotebookDocument.lines(entry.value).map { .string($0) })
            }
        })
    }
}
