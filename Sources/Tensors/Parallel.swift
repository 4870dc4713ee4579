import Executors
import Foundation
import Synchronization

/// Splits a tensor operation's work across the machine's cores on a pool of threads of its own
/// (the engine's `WorkerPool`, off Swift's cooperative pool): the calling thread — a tensor
/// operation runs on a thread of its own — takes part 0 and waits for the others. One operation
/// uses the pool at a time; another waits for it.
enum Parallel {
    /// The pool, started on first use, one thread per core.
    private static let pool = Mutex<WorkerPool?>(nil)

    /// Calls `body` on parts of `0..<count` (in order within a part), one per core, when `work` (a
    /// rough count of operations) is worth splitting; else on this thread. Parts must write
    /// disjoint memory.
    static func forEachPart(of count: Int, work: Int, _ body: (Range<Int>) -> Void) {
        let threads = min(ProcessInfo.processInfo.activeProcessorCount, count)
        guard threads > 1, work >= 1 << 18 else { return body(0..<count) }
        pool.withLock { pool in
            let workers = pool ?? WorkerPool(threads: threads)
            pool = workers
            let parts = min(threads, workers.width)
            workers.run(parts: parts) { part in body((part * count / parts)..<((part + 1) * count / parts)) }
        }
    }
}
