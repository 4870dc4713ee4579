import Executors
import Foundation
import Synchronization

/// What the REPL reacts to when stdin is a pipe or a file: lines (read on a dedicated thread, so
/// waiting for input never occupies Swift's cooperative pool), the end of input, and Ctrl-C
/// (SIGINT, through a `SignalListener`). A terminal is read by `LineEditor` instead.
public final class TerminalEvents: Sendable {
    public enum Event: Sendable {
        case line(String)
        case endOfInput
        case interrupt
    }

    /// The events, in order.
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let interrupts: SignalListener
    /// Where Ctrl-C goes while a cell runs; otherwise it becomes an `.interrupt` event.
    public let interruptRouting = InterruptRouting()

    /// Starts reading stdin and listening for SIGINT.
    public init() {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let continuation = self.continuation
        interrupts = SignalListener { [interruptRouting] _ in
            if !interruptRouting.handle() { continuation.yield(.interrupt) }
        }
        let reader = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(.line(line)) }
            continuation.yield(.endOfInput)
        }
        reader.name = "lumen-stdin"
        reader.start()
    }

    deinit {
        interrupts.cancel()
        continuation.finish()
    }
}
