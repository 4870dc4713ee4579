import Foundation
import Synchronization

/// Turns signals (SIGINT, SIGTERM) into calls of a handler on a dedicated thread: the one way
/// Lumen's commands and kernel take Ctrl-C and interrupt requests.
///
/// The signal handler is installed with `sigaction` before `init` returns, so a signal that arrives
/// at any moment afterwards is delivered (a dispatch signal source registers its handler later,
/// on libdispatch's manager thread, and a signal sent in between under `SIG_IGN` was lost). The
/// handler itself only writes the signal's number to a pipe (`write` is async-signal-safe); the
/// listener's thread reads the pipe and calls `handler`, so no Swift code runs in signal context.
/// One listener is active per process: a new one takes over the signals from the previous one.
public final class SignalListener: Sendable {
    /// The write end of the active listener's pipe, or −1; read by the signal handler.
    private static let activePipe = Atomic<Int32>(-1)

    private let writeEnd: Int32
    private let previousActions: Mutex<[Int32: sigaction]>
    private let cancelled = Atomic<Bool>(false)

    /// Starts listening for `signals`; from now on they call `handler` instead of their previous
    /// action, until `cancel()`.
    public init(signals: [Int32] = [SIGINT], handler: @escaping @Sendable (Int32) -> Void) {
        var ends: [Int32] = [0, 0]
        // A pipe cannot fail here short of running out of descriptors at start-up; if it does,
        // the signals keep their previous action (the process stays interruptible by default).
        guard pipe(&ends) == 0 else {
            writeEnd = -1
            previousActions = Mutex([:])
            return
        }
        let readEnd = ends[0]
        writeEnd = ends[1]
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        let thread = Thread {
            var number: Int32 = 0
            while read(readEnd, &number, MemoryLayout<Int32>.size) == MemoryLayout<Int32>.size { handler(number) }
            close(readEnd)
        }
        thread.name = "lumen-signals"
        thread.start()
        Self.activePipe.store(writeEnd, ordering: .sequentiallyConsistent)
        var previous: [Int32: sigaction] = [:]
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var value = number
                let descriptor = SignalListener.activePipe.load(ordering: .sequentiallyConsistent)
                if descriptor >= 0 { _ = write(descriptor, &value, MemoryLayout<Int32>.size) }
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            var old = sigaction()
            sigaction(number, &action, &old)
            previous[number] = old
        }
        previousActions = Mutex(previous)
    }

    /// Stops listening: the signals get back the actions they had before `init` (unless a newer
    /// listener has taken them over), and the thread ends.
    public func cancel() {
        guard writeEnd >= 0, !cancelled.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let active = Self.activePipe.compareExchange(expected: writeEnd, desired: -1, ordering: .sequentiallyConsistent).exchanged
        previousActions.withLock { previous in
            if active { for (number, var action) in previous { sigaction(number, &action, nil) } }
            previous.removeAll()
        }
        close(writeEnd)
    }

    deinit {
        cancel()
    }
}
