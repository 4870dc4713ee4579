import Evaluation
import OrderedJSON
import Synchronization

/// Output written into an Output widget: each stream, display, result or error becomes one of
/// its nbformat outputs (streams of one name merged, `\r` applied as Jupyter front ends apply it,
/// displays replaced by id), sent as the widget's `outputs` state through `base`, which also
/// takes comms and input requests. What an `interact` form's function or a chat widget's reply
/// prints shows there.
final class OutputWidgetSink: OutputSink {
    private let widget: Widget
    private let base: any OutputSink
    /// The outputs of each display id, and whether a `clearOutput(wait: true)` is pending.
    private let state = Mutex<(displays: [String: [Int]], clearPending: Bool)>(([:], false))

    init(widget: Widget, base: any OutputSink) {
        self.widget = widget
        self.base = base
    }

    var showsWidgets: Bool { base.showsWidgets }

    func stream(_ stream: StandardStream, _ text: String) {
        change { outputs in
            if case .object(var members)? = outputs.last, case .string("stream")? = outputs.last?["output_type"],
               case .string(stream.rawValue)? = outputs.last?["name"], case .string(let earlier)? = outputs.last?["text"],
               let index = members.firstIndex(where: { $0.key == "text" }) {
                members[index].value = .string(Self.overwritten(earlier + text))
                outputs[outputs.count - 1] = .object(members)
            } else {
                outputs.append(JSONValues.object([("output_type", .string("stream")), ("name", .string(stream.rawValue)),
                                                  ("text", .string(Self.overwritten(text)))]))
            }
        }
    }

    func display(_ bundle: MIMEBundle, displayID: String?) {
        change { outputs in
            if let displayID { state.withLock { $0.displays[displayID, default: []].append(outputs.count) } }
            outputs.append(Self.displayData(bundle))
        }
    }

    func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        let places = state.withLock { $0.displays[displayID] ?? [] }
        guard !places.isEmpty else { return }
        change { outputs in
            for place in places where place < outputs.count { outputs[place] = Self.displayData(bundle) }
        }
    }

    func progress(_ bundle: MIMEBundle, id: String, finished: Bool) {
        stream(.stdout, "\r" + (bundle.plainText ?? "") + (finished ? "\n" : ""))
    }

    func clearOutput(wait: Bool) {
        if wait {
            state.withLock { $0.clearPending = true }
        } else {
            state.withLock { $0 = ([:], false) }
            widget.changeOutputs(on: base) { $0.removeAll() }
        }
    }

    func executeResult(_ bundle: MIMEBundle) {
        display(bundle, displayID: nil)
    }

    func error(_ error: ExecutionError) {
        change { outputs in
            outputs.append(JSONValues.object([
                ("output_type", .string("error")), ("ename", .string(error.name)), ("evalue", .string(error.message)),
                ("traceback", .array(error.traceback.map(OrderedJSON.string))),
            ]))
        }
    }

    func page(_ bundle: MIMEBundle) {
        display(bundle, displayID: nil)
    }

    func comm(_ message: CommMessage) {
        base.comm(message)
    }

    func requestInput(prompt: String, password: Bool) async throws -> String {
        try await base.requestInput(prompt: prompt, password: password)
    }

    /// Applies `body` to the outputs (after a pending clear) and sends them.
    private func change(_ body: (inout [OrderedJSON]) -> Void) {
        let clear = state.withLock { state in
            defer { if state.clearPending { state = ([:], false) } }
            return state.clearPending
        }
        widget.changeOutputs(on: base) { outputs in
            if clear { outputs.removeAll() }
            body(&outputs)
        }
    }

    private static func displayData(_ bundle: MIMEBundle) -> OrderedJSON {
        let data = bundle.data.sorted { $0.key < $1.key }.map { type, text in
            (type, MIMEBundle.isJSON(type) ? (try? OrderedJSON(parsing: text)) ?? .string(text) : .string(text))
        }
        return JSONValues.object([("output_type", .string("display_data")), ("data", JSONValues.object(data)), ("metadata", .object([]))])
    }

    /// `text` with what each `\r` overwrites removed: of each line, what follows its last `\r`
    /// (a line ending in `\r` keeps its text and the `\r`, which the next text overwrites).
    static func overwritten(_ text: String) -> String {
        guard text.contains("\r") else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let parts = line.split(separator: "\r", omittingEmptySubsequences: false)
            guard let shown = parts.last(where: { !$0.isEmpty }) else { return "" }
            return String(shown) + (parts.last?.isEmpty == true ? "\r" : "")
        }.joined(separator: "\n")
    }
}
