import Synchronization

/// Places on `count` interchangeable resources (model sessions, a model's endpoints), each
/// taking at most `limit` users at once: a request gets the least busy resource with room (of
/// equally busy ones, the next in turn), or waits until one has; waiters are served first come,
/// first served. Waiting is cancellable and can be bounded, in queue length and in time.
public final class FairPool: Sendable {
    /// Why `acquire` gave up instead of waiting.
    public enum Refusal: Error, Equatable, Sendable {
        /// `waiting` requests were already queued, the most allowed.
        case queueFull(waiting: Int)
        /// No place came free within this time.
        case waitedTooLong(Duration)
    }

    /// The number of resources.
    public let count: Int
    /// Users at once per resource.
    public let limit: Int

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Int, any Error>
    }

    private struct State {
        var busy: [Int]
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Where the search for the least busy resource starts: after the last one given, so
        /// equally busy resources are given in turn.
        var turn = 0

        /// Takes a place on resource `preferred` when it has room under `limit`, else on the
        /// least busy one with room (of equals, the next in turn); nil when all are full.
        mutating func takePlace(preferring preferred: Int?, limit: Int) -> Int? {
            let inTurn = busy.indices.map { (turn + $0) % busy.count }
            let roomy = inTurn.filter { busy[$0] < limit }
            let chosen = if let preferred, roomy.contains(preferred) { preferred } else { roomy.min { busy[$0] < busy[$1] } }
            guard let chosen else { return nil }
            busy[chosen] += 1
            turn = (chosen + 1) % busy.count
            return chosen
        }
    }

    private let state: Mutex<State>

    /// A pool of `count` resources (at least one), `limit` users at once on each.
    public init(count: Int, limit: Int) {
        self.count = count
        self.limit = max(1, limit)
        state = Mutex(State(busy: Array(repeating: 0, count: count)))
    }

    /// Takes a place on a resource, waiting for one if all are full; returns its index, to
    /// give back with `release`. Resource `preferring` is taken when it has room and no one is
    /// waiting, else the least busy (of equals, the next in turn). With `queueLimit`, refuses at
    /// once (`Refusal.queueFull`) when that many are already waiting; with `waitLimit`, gives up
    /// (`Refusal.waitedTooLong`) when no place came free in that time. `queued` hears how many were ahead when it has to wait.
    public func acquire(preferring: Int? = nil, queueLimit: Int = .max, waitLimit: Duration? = nil, queued: (@Sendable (Int) -> Void)? = nil) async throws -> Int {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let deadline = waitLimit.map { ContinuousClock.now.advanced(by: $0) }
        // Wakes the waiter at its deadline; the waiter list, under the lock, decides who resumes it.
        let timer = deadline.map { deadline in
            Task { [self] in
                try await Task.sleep(until: deadline, clock: .continuous)
                remove(id, failing: Refusal.waitedTooLong(waitLimit ?? .zero))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                let admission: Admission = state.withLock { state in
                    if Task.isCancelled { return .refused(CancellationError()) }
                    if state.waiters.isEmpty, let index = state.takePlace(preferring: preferring, limit: limit) {
                        return .granted(index)
                    }
                    if state.waiters.count >= queueLimit { return .refused(Refusal.queueFull(waiting: state.waiters.count)) }
                    // The timer removes waiters after their deadline: one that arrives later fails here.
                    if let deadline, ContinuousClock.now >= deadline { return .refused(Refusal.waitedTooLong(waitLimit ?? .zero)) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .queued(ahead: state.waiters.count - 1)
                }
                switch admission {
                case .granted(let index): continuation.resume(returning: index)
                case .refused(let error): continuation.resume(throwing: error)
                case .queued(let ahead): queued?(ahead)
                }
            }
        } onCancel: {
            remove(id, failing: CancellationError())
        }
    }

    /// What `acquire` decided under the lock.
    private enum Admission {
        case granted(Int)
        case refused(any Error)
        /// Waiting behind `ahead` others; `release`, the timer or cancellation resumes it.
        case queued(ahead: Int)
    }

    /// Takes waiter `id` out of the queue, if it is still there, and fails it with `error`.
    private func remove(_ id: UInt64, failing error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard let position = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: position)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// How many requests are waiting for a place.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// How many places are taken, on all resources together, and how many requests wait for
    /// one, read at one instant.
    public var occupancy: (taken: Int, waiting: Int) { state.withLock { ($0.busy.reduce(0, +), $0.waiters.count) } }

    /// Gives back a place taken by `acquire`: to the first waiter, or to the resource.
    public func release(_ index: Int) {
        let waiter: Waiter? = state.withLock { state in
            guard !state.waiters.isEmpty else {
                state.busy[index] -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: index)
    }
}
