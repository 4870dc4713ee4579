import Dispatch
import Foundation

/// A persistent pool of threads that run the parts of one data-parallel job at a time: the caller
/// runs part 0 itself and waits until the workers have run the others. Threads are started once,
/// not per job.
final class WorkerPool: Sendable {
    /// A job's body, shared with the workers for the duration of one `run`.
    ///
    /// Safety of `@unchecked Sendable`: `run` stores a job before signalling the workers and does
    /// not return (so the non-escaping closure stays valid and is not replaced) until every worker
    /// has signalled that its part is done; the semaphores order these memory accesses. Parts
    /// write disjoint memory by contract.
    private final class Job: @unchecked Sendable {
        var body: ((Int) -> Void)?
        var stopping = false
    }

    /// How many parts a job can have: the workers plus the calling thread.
    let width: Int
    private let job = Job()
    private let starts: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `threads - 1` worker threads.
    init(threads: Int) {
        width = max(1, threads)
        starts = (0..<(width - 1)).map { _ in DispatchSemaphore(value: 0) }
        for (index, start) in starts.enumerated() {
            let thread = Thread { [job, finished] in
                while true {
                    start.wait()
                    if job.stopping { return }
                    job.body?(index + 1)
                    finished.signal()
                }
            }
            thread.name = "lumen-worker-\(index + 1)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    deinit {
        job.stopping = true
        for start in starts { start.signal() }
    }

    /// Runs `body(part)` for each part in `0..<parts` (at most `width`), in parallel, and returns
    /// when all are done.
    func run(parts: Int, _ body: (Int) -> Void) {
        let parts = min(parts, width)
        guard parts > 1 else {
            body(0)
            return
        }
        withoutActuallyEscaping(body) { body in
            job.body = body
            for start in starts.prefix(parts - 1) { start.signal() }
            body(0)
            for _ in 1..<parts { finished.wait() }
            job.body = nil
        }
    }
}
