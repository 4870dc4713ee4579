import Synchronization

/// Places on `count` interchangeable resources (model sessions, a model's endpoints), each
/// taking at most `limit` users at once: a request gets the least busy resource with room, or
/// waits until one has; waiters are served first come, first served. Waiting is cancellable.
public final class FairPool: Sendable {
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
    }

    private let state: Mutex<State>

    /// A pool of `count` resources (at least one), `limit` users at once on each.
    public init(count: Int, limit: Int) {
        self.count = count
        self.limit = max(1, limit)
        state = Mutex(State(busy: Array(repeating: 0, count: count)))
    }

    /// Takes a place on a resource, waiting for one if all are full; returns its index, to
    /// give back with `release`.
    public func acquire() async throws -> Int {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                let outcome: Result<Int, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.waiters.isEmpty, let index = state.busy.indices.filter({ state.busy[$0] < limit }).min(by: { state.busy[$0] < state.busy[$1] }) {
                        state.busy[index] += 1
                        return .success(index)
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let position = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: position)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// How many requests are waiting for a place.
    public var waiting: Int { state.withLock { $0.waiters.count } }

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
