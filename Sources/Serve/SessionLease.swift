import Executors
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

    /// Gives the session back (again: nothing).
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { pool.release(index) }
    }

    deinit {
        release()
    }
}
