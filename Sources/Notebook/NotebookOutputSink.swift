import Evaluation
import Foundation
import JupyterProtocol
import Synchronization

/// Records what cells publish as nbformat outputs, the way Jupyter stores them: consecutive
/// streams of one name merged, display updates applied to every output shown under their id (the
/// notebook keeps each display's final state), `clear_output` honoured. Optionally echoes text
/// to stderr as it arrives.
public final class NotebookOutputSink: OutputSink {
    private struct State {
        var outputs: [[JSONValue]]
        var cell = 0
        var clearPending = false
        var displays: [String: [(cell: Int, output: Int)]] = [:]
        var echoed: [String: String] = [:]
    }

    private let state: Mutex<State>
    private let echo: Bool

    /// A sink for a notebook of `cellCount` cells; with `echo`, text is also written to stderr.
    public init(cellCount: Int, echo: Bool) {
        state = Mutex(State(outputs: Array(repeating: [], count: cellCount)))
        self.echo = echo
    }

    /// Directs what follows to cell `index`, starting it with no outputs.
    public func begin(cell index: Int) {
        state.withLock { state in
            state.cell = index
            state.outputs[index] = []
            state.clearPending = false
        }
    }

    /// The outputs recorded for cell `index`.
    public func outputs(of index: Int) -> [JSONValue] {
        state.withLock { $0.outputs[index] }
    }

    private func append(_ output: JSONValue, displayID: String? = nil) {
        state.withLock { state in
            if state.clearPending {
                state.outputs[state.cell] = []
                state.clearPending = false
            }
            state.outputs[state.cell].append(output)
            if let displayID { state.displays[displayID, default: []].append((state.cell, state.outputs[state.cell].count - 1)) }
        }
    }

    private func echoText(_ text: String, id: String? = nil) {
        guard echo else { return }
        let delta: String = state.withLock { state in
            guard let id else { return text }
            defer { state.echoed[id] = text }
            guard let previous = state.echoed[id] else { return text }
            return text.hasPrefix(previous) ? String(text.dropFirst(previous.count)) : "\n" + text
        }
        FileHandle.standardError.write(Data(delta.utf8))
    }

    public func stream(_ stream: StandardStream, _ text: String) {
        echoText(text)
        state.withLock { state in
            if state.clearPending {
                state.outputs[state.cell] = []
                state.clearPending = false
            }
            if case .object(var last)? = state.outputs[state.cell].last, last["output_type"] == .string("stream"),
               last["name"] == .string(stream.rawValue), case .array(let lines)? = last["text"] {
                let merged = lines.compactMap(\.stringValue).joined() + text
                last["text"] = .array(NotebookDocument.lines(merged).map { .string($0) })
                state.outputs[state.cell][state.outputs[state.cell].count - 1] = .object(last)
            } else {
                state.outputs[state.cell].append(.object([
                    "output_type": .string("stream"), "name": .string(stream.rawValue),
                    "text": .array(NotebookDocument.lines(text).map { .string($0) }),
                ]))
            }
        }
    }

    public func display(_ bundle: MIMEBundle, displayID: String?) {
        echoText((bundle.plainText ?? "") + (displayID == nil ? "\n" : ""), id: displayID)
        append(.object(["output_type": .string("display_data"), "data": Self.data(bundle), "metadata": .object([:])]), displayID: displayID)
    }

    public func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
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

    public func clearOutput(wait: Bool) {
        state.withLock { state in
            if wait {
                state.clearPending = true
            } else {
                state.outputs[state.cell] = []
            }
        }
    }

    public func executeResult(_ bundle: MIMEBundle) {
        echoText((bundle.plainText ?? "") + "\n")
        let count: JSONValue = state.withLock { state in .int(state.cell) }
        append(.object(["output_type": .string("execute_result"), "data": Self.data(bundle), "metadata": .object([:]), "execution_count": count]))
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

    public func error(_ error: ExecutionError) {
        append(.object([
            "output_type": .string("error"), "ename": .string(error.name), "evalue": .string(error.message),
            "traceback": .array(error.traceback.map { .string($0) }),
        ]))
    }

    public func page(_ bundle: MIMEBundle) {
        echoText((bundle.plainText ?? "") + "\n")
    }

    public func requestInput(prompt: String, password: Bool) async throws -> String {
        throw InputUnavailableError(reason: "a notebook run cannot ask for input")
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
