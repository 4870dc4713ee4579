import CProcessControl
import Dispatch
import Foundation
import Synchronization

/// A persistent pool of threads that run the parts of one data-parallel job at a time: the caller
/// runs part 0 itself and waits until the workers have run the others. Threads are started once.
///
/// Between jobs a worker spins on the job counter for a short while (with the CPU's pause hint),
/// since a forward pass posts jobs microseconds apart and waking a sleeping thread costs more than
/// most jobs take; after the spin budget it sleeps on a semaphore until the next job.
/// `shutdown` ends the workers and waits until every thread has returned.
public final class WorkerPool: Sendable {
    /// Where the pool is in its life.
    private enum State: Int, AtomicRepresentable {
        /// Taking jobs.
        case running
        /// `shutdown` was called: workers return at their next look at the job counter.
        case stopped
    }

    /// A job's body, shared with the workers for the duration of one `run`.
    ///
    /// Safety of `@unchecked Sendable`: `run` stores the body before publishing the job (a
    /// sequentially consistent increment of `generation`) and does not return, so the
    /// non-escaping closure stays valid and is not replaced, until every worker has finished its
    /// part (`remaining` reaches 0). Parts write disjoint memory by contract.
    private final class Job: @unchecked Sendable {
        var body: ((Int) -> Void)?
        var parts = 0
    }

    private final class Worker: Sendable {
        let sleeping = Atomic<Bool>(false)
        let wake = DispatchSemaphore(value: 0)
        /// Signalled as the worker's thread returns, for `shutdown` to join it.
        let exited = DispatchSemaphore(value: 0)
    }

    /// How many parts a job can have: the workers plus the calling thread.
    public let width: Int
    private let job = Job()
    private let generation = Atomic<Int>(0)
    private let remaining = Atomic<Int>(0)
    private let state = Atomic<State>(.running)
    private let workers: [Worker]
    /// Spins before sleeping: with the pause hint (27–40 ns each), about 30–40 µs.
    private static let spinLimit = 1_000

    /// Starts `threads - 1` worker threads.
    public init(threads: Int) {
        width = max(1, threads)
        workers = (0..<(width - 1)).map { _ in Worker() }
        for (index, worker) in workers.enumerated() {
            let thread = Thread { [self] in serve(worker, part: index + 1) }
            thread.name = "lumen-worker-\(index + 1)"
            thread.start()
        }
    }

    /// Stops the worker threads and waits until each has returned (they are idle between jobs,
    /// so this takes a wake-up); the pool is unusable afterwards. Later calls do nothing.
    public func shutdown() {
        guard state.compareExchange(expected: .running, desired: .stopped, ordering: .sequentiallyConsistent).exchanged else { return }
        generation.add(1, ordering: .sequentiallyConsistent)
        wakeSleepers()
        for worker in workers { worker.exited.wait() }
    }

    private func serve(_ worker: Worker, part: Int) {
        defer { worker.exited.signal() }
        var seen = 0
        while true {
            var spins = 0
            while generation.load(ordering: .sequentiallyConsistent) == seen {
                spins += 1
                if spins < Self.spinLimit {
                    lumen_cpu_relax()
                    continue
                }
                worker.sleeping.store(true, ordering: .sequentiallyConsistent)
                if generation.load(ordering: .sequentiallyConsistent) != seen {
                    // A job arrived while going to sleep: if its poster already took the flag,
                    // it signalled, and that signal must be consumed.
                    if !worker.sleeping.exchange(false, ordering: .sequentiallyConsistent) { worker.wake.wait() }
                } else {
                    worker.wake.wait()
                }
                spins = 0
            }
            seen = generation.load(ordering: .sequentiallyConsistent)
            if state.load(ordering: .sequentiallyConsistent) == .stopped { return }
            if part < job.parts, let body = job.body { body(part) }
            if part < job.parts { remaining.subtract(1, ordering: .sequentiallyConsistent) }
        }
    }

    private func wakeSleepers() {
        for worker in workers where worker.sleeping.exchange(false, ordering: .sequentiallyConsistent) {
            worker.wake.signal()
        }
    }

    /// Runs `body(part)` for each part in `0..<parts` (at most `width`), in parallel, and returns
    /// when all are done.
    public func run(parts: Int, _ body: (Int) -> Void) {
        let parts = min(parts, width)
        guard parts > 1 else {
            body(0)
            return
        }
        withoutActuallyEscaping(body) { body in
            job.body = body
            job.parts = parts
            remaining.store(parts - 1, ordering: .sequentiallyConsistent)
            generation.add(1, ordering: .sequentiallyConsistent)
            wakeSleepers()
            body(0)
            while remaining.load(ordering: .sequentiallyConsistent) > 0 { lumen_cpu_relax() }
            job.body = nil
        }
    }
}
