import Evaluation
import Foundation
import JupyterProtocol
import Synchronization

/// What a cell asks of the front end besides output, returned as payloads in its
/// `execute_reply`: pages to show (`page`) and the end of the session (`ask_exit`, which
/// jupyter console obeys, as it does for ipykernel's `exit`).
final class ReplyPayloads: Sendable {
    private let entries = Mutex<[JSONValue]>([])

    /// Documentation for the pager.
    func page(_ bundle: MIMEBundle) {
        entries.withLock { $0.append(.object(["source": .string("page"), "data": .object(JupyterOutputSink.wireData(bundle)), "start": .int(0)])) }
    }

    /// The user asked to end the session.
    func askExit() {
        entries.withLock { $0.append(.object(["source": .string("ask_exit"), "keepkernel": .bool(false)])) }
    }

    /// The payload entries, as the protocol lays them out.
    var payload: [JSONValue] { entries.withLock { $0 } }
}

/// Publishes one cell's output as Jupyter messages: streams, displays and results on IOPub with
/// the cell's request as parent, input requests on the stdin channel.
struct JupyterOutputSink: OutputSink {
    let parent: MessageHeader
    let identities: [Data]
    let executionCount: Int
    let silent: Bool
    let allowStdin: Bool
    let iopub: IOPubPublisher
    let stdin: StdinBridge
    let payloads: ReplyPayloads

    func stream(_ stream: StandardStream, _ text: String) {
        iopub.publish("stream", StreamContent(name: stream.rawValue, text: text), parent: parent)
    }

    func display(_ bundle: MIMEBundle, displayID: String?) {
        iopub.publish("display_data", DisplayContent(data: Self.wireData(bundle), displayID: displayID), parent: parent)
    }

    func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        iopub.publish("update_display_data", DisplayContent(data: Self.wireData(bundle), displayID: displayID), parent: parent)
    }

    /// Streamed text, each state from the start of its line (`\r`), so jupyter console,
    /// JupyterLab, VS Code and nbclient all show it as it moves.
    func progress(_ bundle: MIMEBundle, id: String, finished: Bool) {
        stream(.stdout, "\r" + (bundle.plainText ?? "") + (finished ? "\n" : ""))
    }

    func clearOutput(wait: Bool) {
        iopub.publish("clear_output", ClearOutputContent(wait: wait), parent: parent)
    }

    func executeResult(_ bundle: MIMEBundle) {
        guard !silent else { return }
        iopub.publish(
            "execute_result",
            DisplayContent(data: Self.wireData(bundle), executionCount: executionCount),
            parent: parent
        )
    }

    func error(_ error: ExecutionError) {
        iopub.publish("error", ErrorContent(ename: error.name, evalue: error.message, traceback: error.traceback), parent: parent)
    }

    func page(_ bundle: MIMEBundle) {
        payloads.page(bundle)
    }

    var showsWidgets: Bool { true }

    func comm(_ message: CommMessage) {
        let data = JSONValue(parsing: message.data)?.objectValue ?? [:]
        let metadata = JSONValue(parsing: message.metadata)?.objectValue ?? [:]
        switch message.kind {
        case .open(let target):
            iopub.publish("comm_open", CommContent(commID: message.commID, targetName: target, data: data), parent: parent, metadata: metadata)
        case .message:
            iopub.publish("comm_msg", CommContent(commID: message.commID, data: data), parent: parent, metadata: metadata)
        case .close:
            iopub.publish("comm_close", CommContent(commID: message.commID, data: data), parent: parent, metadata: metadata)
        }
    }

    func askExit() {
        payloads.askExit()
    }

    func requestInput(prompt: String, password: Bool) async throws -> String {
        guard allowStdin else {
            throw InputUnavailableError(reason: "this front end does not support input requests")
        }
        return try await stdin.requestInput(prompt: prompt, password: password, parent: parent, identities: identities)
    }

    /// A bundle as the wire carries it: JSON types embedded as JSON, the rest as strings.
    static func wireData(_ bundle: MIMEBundle) -> [String: JSONValue] {
        bundle.data.reduce(into: [:]) { data, entry in
            let (mimeType, text) = entry
            if MIMEBundle.isJSON(mimeType), let json = JSONValue(parsing: text) {
                data[mimeType] = json
            } else {
                data[mimeType] = .string(text)
            }
        }
    }
}
