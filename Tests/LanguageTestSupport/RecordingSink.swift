import Evaluation
import Synchronization

/// An output sink that records what a cell published, for assertions; shared by the language
/// and model-host tests.
public final class RecordingSink: OutputSink {
    /// One thing a cell published.
    public enum Event: Equatable, Sendable {
        case stream(StandardStream, String)
        case display(MIMEBundle, String?)
        case update(MIMEBundle, String)
        case progress(MIMEBundle, String, finished: Bool)
        case clear(Bool)
        case result(MIMEBundle)
        case error(ExecutionError)
        case page(MIMEBundle)
        case comm(CommMessage)
    }

    private let recorded = Mutex<[Event]>([])
    private let inputs: Mutex<[String]?>
    /// Whether it stands for a front end that shows widgets.
    public let showsWidgets: Bool
    /// Told of each stream write as it is recorded, on the writer's thread.
    private let onStream: (@Sendable (StandardStream, String) -> Void)?

    /// A sink that answers input requests with `inputs`, in order, or refuses them when nil,
    /// records comm messages as a front end with widgets (`showsWidgets`) would receive them, and
    /// tells `onStream` of each stream write (a test that acts at a point of a running cell).
    public init(inputs: [String]? = nil, showsWidgets: Bool = false, onStream: (@Sendable (StandardStream, String) -> Void)? = nil) {
        self.inputs = Mutex(inputs)
        self.showsWidgets = showsWidgets
        self.onStream = onStream
    }

    /// The comm messages sent, in order.
    public var comms: [CommMessage] {
        events.compactMap { if case .comm(let message) = $0 { message } else { nil } }
    }

    /// Everything published so far, in order.
    public var events: [Event] { recorded.withLock { $0 } }

    /// The text written to standard output.
    public var stdout: String {
        events.compactMap { if case .stream(.stdout, let text) = $0 { text } else { nil } }.joined()
    }

    /// The plain text of each execute result.
    public var results: [String] {
        events.compactMap { if case .result(let bundle) = $0 { bundle.plainText } else { nil } }
    }

    public func stream(_ stream: StandardStream, _ text: String) {
        recorded.withLock { $0.append(.stream(stream, text)) }
        onStream?(stream, text)
    }
    public func display(_ bundle: MIMEBundle, displayID: String?) { recorded.withLock { $0.append(.display(bundle, displayID)) } }
    public func updateDisplay(_ bundle: MIMEBundle, displayID: String) { recorded.withLock { $0.append(.update(bundle, displayID)) } }
    public func progress(_ bundle: MIMEBundle, id: String, finished: Bool) { recorded.withLock { $0.append(.progress(bundle, id, finished: finished)) } }
    public func clearOutput(wait: Bool) { recorded.withLock { $0.append(.clear(wait)) } }
    public func executeResult(_ bundle: MIMEBundle) { recorded.withLock { $0.append(.result(bundle)) } }
    public func error(_ error: ExecutionError) { recorded.withLock { $0.append(.error(error)) } }
    public func page(_ bundle: MIMEBundle) { recorded.withLock { $0.append(.page(bundle)) } }
    public func comm(_ message: CommMessage) { recorded.withLock { $0.append(.comm(message)) } }

    public func requestInput(prompt: String, password: Bool) async throws -> String {
        let answer: String? = inputs.withLock { inputs in
            guard inputs != nil else { return nil }
            return inputs?.isEmpty == false ? inputs?.removeFirst() : ""
        }
        guard let answer else { throw InputUnavailableError(reason: "no stdin in this test") }
        return answer
    }
}
