import Executors
import Testing

/// The order in which waiters got their places.
private actor Arrivals {
    var order: [Int] = []
    func append(_ waiter: Int) { order.append(waiter) }
}

struct FairPoolTests {
    @Test func placesGoToTheLeastBusyResourceThenWaitersInOrder() async throws {
        let pool = FairPool(count: 2, limit: 2)
        var taken: [Int] = []
        for _ in 0..<4 { taken.append(try await pool.acquire()) }
        #expect(taken.sorted() == [0, 0, 1, 1] && taken[0] != taken[1])
        // Three waiters queue; each release hands its place to the earliest.
        let arrivals = Arrivals()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for waiter in 0..<3 {
                group.addTask {
                    let index = try await pool.acquire()
                    await arrivals.append(waiter)
                    pool.release(index)
                }
                // Each waiter is queued before the next is started: wait until it is.
                while pool.waiting < waiter + 1 { await Task.yield() }
            }
            pool.release(taken[0])
            try await group.waitForAll()
        }
        #expect(await arrivals.order == [0, 1, 2])
    }

    @Test func equallyBusyResourcesAreGivenInTurn() async throws {
        let pool = FairPool(count: 3, limit: 2)
        var given: [Int] = []
        for _ in 0..<4 {
            let index = try await pool.acquire()
            given.append(index)
            pool.release(index)
        }
        #expect(given == [0, 1, 2, 0])
    }

    @Test func aPreferredResourceIsTakenWhileItHasRoom() async throws {
        let pool = FairPool(count: 2, limit: 2)
        var taken: [Int] = []
        for _ in 0..<3 { taken.append(try await pool.acquire(preferring: 1)) }
        #expect(taken == [1, 1, 0])
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let pool = FairPool(count: 1, limit: 1)
        let held = try await pool.acquire()
        let waiter = Task { try await pool.acquire() }
        while pool.waiting < 1 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(pool.waiting == 0)
        pool.release(held)
        #expect(try await pool.acquire() == 0)
    }

    @Test func aFullQueueRefusesAtOnceAndTheRestStillGetTheirTurn() async throws {
        let pool = FairPool(count: 1, limit: 1)
        let held = try await pool.acquire()
        let first = Task { try await pool.acquire(queueLimit: 1) }
        while pool.waiting < 1 { await Task.yield() }
        await #expect(throws: FairPool.Refusal.queueFull(waiting: 1)) { try await pool.acquire(queueLimit: 1) }
        pool.release(held)
        #expect(try await first.value == 0)
    }

    @Test func aWaiterGivesUpAfterItsWaitLimitAndLeavesTheQueue() async throws {
        let pool = FairPool(count: 1, limit: 1)
        let held = try await pool.acquire()
        await #expect(throws: FairPool.Refusal.waitedTooLong(.milliseconds(50))) { try await pool.acquire(waitLimit: .milliseconds(50)) }
        #expect(pool.waiting == 0)
        // A place that comes free in time is taken, and the timer then does nothing.
        let waiter = Task { try await pool.acquire(waitLimit: .seconds(600)) }
        while pool.waiting < 1 { await Task.yield() }
        pool.release(held)
        #expect(try await waiter.value == 0)
    }
}
