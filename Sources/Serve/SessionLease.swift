import Executors
import Logging
import Synchronization

/// A session of a served model's pool, held by one request: given back exactly once, by
/// `release()` or when the lease is dropped, so a response that is never written (its client
/// left before the headers) still frees its session.
final class SessionLease: Sendable {
    /// The session's index in the model's pool.
    let index: Int
    private let pool: FairPool
    private let released = Atomic<Bool>(false)

    init(index: Int, pool: FairPool) {
        self.index = index
        self.pool = pool
    }

    /// A session of `model`'s pool for request `id`, waiting its turn within `limits`' queue
    /// bounds, logging how many are ahead; a request cancelled while waiting leaves the queue.
    static func acquire(_ model: ServedModel, limits: ServerLimits, logger: Logger, id: String, shutdown: ServerShutdown) async throws -> SessionLease {
        do {
            let index = try await model.pool.acquire(queueLimit: limits.maximumQueued, waitLimit: limits.maximumWait) { ahead in
                logger.info("\(id) queued for a session, \(ahead) ahead")
            }
            return SessionLease(index: index, pool: model.pool)
        } catch is CancellationError {
            logger.info("\(id) left the queue without running (\(shutdown.interruption))")
            throw CancellationError()
        }
    }

    /// Gives the session back (again: nothing).
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { pool.release(index) }
    }

    deinit {
        release()
    }
}
