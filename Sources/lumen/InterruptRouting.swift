import Synchronization

/// Where Ctrl-C goes while a cell runs: its handler cancels the cell and consumes the interrupt;
/// with no handler set, the interrupt is the front end's to handle (at the prompt).
final class InterruptRouting: Sendable {
    private let handler = Mutex<(@Sendable () -> Bool)?>(nil)

    /// While `newHandler` is set, interrupts call it.
    func set(_ newHandler: (@Sendable () -> Bool)?) {
        handler.withLock { $0 = newHandler }
    }

    /// Calls the handler; false when there is none or it did not consume the interrupt.
    func handle() -> Bool {
        handler.withLock { $0 }?() ?? false
    }
}
