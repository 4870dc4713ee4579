import Synchronization

/// Where Ctrl-C goes while a cell runs: its handler cancels the cell and consumes the interrupt;
/// with no handler set, the interrupt is the front end's to handle (at the prompt).
public final class InterruptRouting: Sendable {
    private let handler = Mutex<(@Sendable () -> Bool)?>(nil)

    /// Routing with no handler set.
    public init() {}

    /// While `newHandler` is set, interrupts call it.
    public func set(_ newHandler: (@Sendable () -> Bool)?) {
        handler.withLock { $0 = newHandler }
    }

    /// Calls the handler; false when there is none or it did not consume the interrupt.
    public func handle() -> Bool {
        handler.withLock { $0 }?() ?? false
    }
}
