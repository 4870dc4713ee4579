import Synchronization

/// Whether `lumen serve` is shutting down: set by the first SIGTERM or SIGINT, read by requests
/// to tell a cancellation by the shutdown from a client that went away.
final class ServerShutdown: Sendable {
    private let begun = Atomic<Bool>(false)

    /// Marks the shutdown as begun; true the first time only.
    func begin() -> Bool {
        !begun.exchange(true, ordering: .sequentiallyConsistent)
    }

    /// Whether the shutdown has begun.
    var hasBegun: Bool { begun.load(ordering: .sequentiallyConsistent) }

    /// Why a request was cut short, for the log.
    var interruption: String { hasBegun ? "the server is shutting down" : "client gone" }
}
