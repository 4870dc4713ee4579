import Evaluation
import JupyterProtocol

/// Publishes a debugger's events on IOPub as `debug_event`, with the last debug request as
/// parent (as ipykernel does).
struct DebugEventPublisher: DebugEventSink {
    let iopub: IOPubPublisher
    let parent: MessageHeader

    func publish(_ event: DebugEvent) {
        iopub.publish("debug_event", event, parent: parent)
    }
}
