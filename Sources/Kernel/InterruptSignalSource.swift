import Dispatch
import Foundation

/// Turns SIGINT into a call of `handler` through a dispatch signal source (no code runs in the
/// signal handler itself), for kernels started with `interrupt_mode: "signal"`.
final class InterruptSignalSource {
    private let source: any DispatchSourceSignal

    /// Starts listening; SIGINT no longer terminates the process while this object lives.
    init(queue: DispatchQueue = DispatchQueue(label: "lumen.signals"), handler: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
    }

    deinit {
        source.cancel()
    }
}
