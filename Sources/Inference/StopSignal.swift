import Synchronization

/// Asks a running generation to stop at the next token while its consumer keeps reading, so the
/// stream still ends with a summary (finish reason `cancelled`). Dropping the stream or
/// cancelling the consumer stops it too, without the summary.
public final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)

    /// Creates a signal that is not raised.
    public init() {}

    /// Asks the generation to stop.
    public func raise() {
        raised.store(true, ordering: .relaxed)
    }

    /// Whether `raise()` was called.
    public var isRaised: Bool { raised.load(ordering: .relaxed) }
}
