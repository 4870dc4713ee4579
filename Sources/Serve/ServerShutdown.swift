import Synchronization

/// Whether `lumen serve` is shutting down: set by the first SIGTERM or SIGINT, read by requests
/// to tell a cancellation by the shutdown from a client that went away; and the requests
/// running, which it cancels when the grace period ends, so that each still answers (a 503 for a
/// whole answer, a last event for a stream) before the connections close.
final class ServerShutdown: Sendable {
    private let begun = Atomic<Bool>(false)
    private struct Running {
        var cancels: [Int: @Sendable () -> Void] = [:]
        var nextKey = 0
        var graceEnded = false
    }
    private let running = Mutex(Running())

    /// Marks the shutdown as begun; true the first time only.
    func begin() -> Bool {
        !begun.exchange(true, ordering: .sequentiallyConsistent)
    }

    /// Whether the shutdown has begun.
    var hasBegun: Bool { begun.load(ordering: .sequentiallyConsistent) }

    /// Why a request was cut short, for the log.
    var interruption: String { hasBegun ? "the server is shutting down" : "client gone" }

    /// Runs `work` in a task of its own that is cancelled when this task is, or when the
    /// shutdown's grace period ends.
    func cancellingWhenGraceEnds<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        let key: Int? = running.withLock { running in
            guard !running.graceEnded else { return nil }
            let key = running.nextKey
            running.nextKey += 1
            running.cancels[key] = { task.cancel() }
            return key
        }
        if key == nil { task.cancel() }
        defer { if let key { running.withLock { _ = $0.cancels.removeValue(forKey: key) } } }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Cancels every request running, and any that starts after.
    func cancelRunning() {
        let cancels = running.withLock { running in
            running.graceEnded = true
            return Array(running.cancels.values)
        }
        for cancel in cancels { cancel() }
    }
}
