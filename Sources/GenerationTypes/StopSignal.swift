import Synchronization

/// Asks a running generation to stop at the next token while its consumer keeps reading, so the
/// stream still ends with a summary (finish reason `cancelled`). Dropping the stream or
/// cancelling the consumer stops it too, without the summary.
public final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)
    private let actions = Mutex<[@Sendable () -> Void]>([])

    /// Creates a signal that is not raised.
    public init() {}

    /// Asks the generation to stop, running (once) the actions registered with `whenRaised`.
    public func raise() {
        guard !raised.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for action in actions.withLock({ actions in defer { actions = [] }; return actions }) { action() }
    }

    /// Runs `action` when the signal is raised (at once if it already is): for a generation that
    /// waits on something other than tokens, such as a network stream, to stop waiting.
    public func whenRaised(_ action: @escaping @Sendable () -> Void) {
        let runNow = actions.withLock { actions in
            if raised.load(ordering: .acquiring) { return true }
            actions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Whether `raise()` was called.
    public var isRaised: Bool { raised.load(ordering: .relaxed) }
}
