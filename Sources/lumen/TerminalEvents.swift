import Executors
import Foundation
import Synchronization

/// What the REPL reacts to: lines from stdin (read on a dedicated thread, so waiting for input
/// never occupies Swift's cooperative pool), the end of input, and Ctrl-C (SIGINT, through a
/// `SignalListener`).
final class TerminalEvents: Sendable {
    enum Event: Sendable {
        case line(String)
        case endOfInput
        case interrupt
    }

    /// The events, in order.
    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let interrupts: SignalListener
    private let interruptRouting = InterruptRouting()
    private let inputRouting = InputRouting()

    /// A cell waiting for a line of input (from `input()`), served before the event stream.
    private final class InputRouting: Sendable {
        private let waiting = Mutex<CheckedContinuation<String, any Error>?>(nil)

        /// Hands `line` to a waiting cell; false when none waits.
        func deliver(_ line: String) -> Bool {
            guard let continuation = take() else { return false }
            continuation.resume(returning: line)
            return true
        }

        /// Ends a wait with `error`, if there is one.
        func fail(_ error: any Error) {
            take()?.resume(throwing: error)
        }

        /// Waits for the next line; cancelling the task ends the wait with `CancellationError`.
        func next() async throws -> String {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    waiting.withLock { $0 = continuation }
                    if Task.isCancelled { fail(CancellationError()) }
                }
            } onCancel: {
                fail(CancellationError())
            }
        }

        /// Removes the waiting continuation: whoever takes it resumes it, exactly once.
        private func take() -> CheckedContinuation<String, any Error>? {
            waiting.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }
        }
    }

    /// Standard input ended while a cell waited for input.
    struct EndOfInput: Error, CustomStringConvertible {
        var description: String { "standard input ended" }
    }

    /// Where Ctrl-C goes while a cell runs.
    private final class InterruptRouting: Sendable {
        private let handler = Mutex<(@Sendable () -> Bool)?>(nil)

        func set(_ newHandler: (@Sendable () -> Bool)?) {
            handler.withLock { $0 = newHandler }
        }

        /// Calls the handler; false when there is none or it did not consume the interrupt.
        func handle() -> Bool {
            handler.withLock { $0 }?() ?? false
        }
    }

    /// Starts reading stdin and listening for SIGINT.
    init() {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let continuation = self.continuation
        interrupts = SignalListener { [interruptRouting] _ in
            if !interruptRouting.handle() { continuation.yield(.interrupt) }
        }
        let reader = Thread { [inputRouting] in
            while let line = readLine(strippingNewline: true) {
                if !inputRouting.deliver(line) { continuation.yield(.line(line)) }
            }
            inputRouting.fail(EndOfInput())
            continuation.yield(.endOfInput)
        }
        reader.name = "lumen-stdin"
        reader.start()
    }

    deinit {
        interrupts.cancel()
        continuation.finish()
    }

    /// Waits for the next line typed, for a cell's `input()`.
    func readInputLine() async throws -> String {
        try await inputRouting.next()
    }

    /// While `handler` is set, Ctrl-C calls it; when it returns true the interrupt is consumed
    /// (a running cell was cancelled) instead of becoming an event.
    func onInterrupt(_ handler: (@Sendable () -> Bool)?) {
        interruptRouting.set(handler)
    }
}
