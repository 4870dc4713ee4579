import Evaluation
import Foundation
import JupyterProtocol
import Synchronization

/// Pages a cell asked to show, returned as `page` payloads in its `execute_reply`.
final class PagerPayloads: Sendable {
    private let pages = Mutex<[MIMEBundle]>([])

    func append(_ bundle: MIMEBundle) {
        pages.withLock { $0.append(bundle) }
    }

    /// The payload entries, as the protocol lays them out.
    var payload: [JSONValue] {
        pages.withLock { pages in
            pages.map { .object(["source": .string("page"), "data": .object(JupyterOutputSink.wireData($0)), "start": .int(0)]) }
        }
    }
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
    let pages: PagerPayloads

    func stream(_ stream: StandardStream, _ text: String) {
        iopub.publish("stream", StreamContent(name: stream.rawValue, text: text), parent: parent)
    }

    func display(_ bundle: MIMEBundle, displayID: String?) {
        iopub.publish("display_data", DisplayContent(data: Self.wireData(bundle), displayID: displayID), parent: parent)
    }

    func updateDisplay(_ bundle: MIMEBundle, displayID: String) {
        iopub.publish("update_display_data", DisplayContent(data: Self.wireData(bundle), displayID: displayID), parent: parent)
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
        pages.append(bundle)
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
