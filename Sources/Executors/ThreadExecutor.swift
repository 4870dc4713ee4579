import Dispatch
import Foundation
import Synchronization

/// A serial executor backed by one dedicated thread, so that an actor using it runs long
/// computations without occupying Swift's cooperative thread pool.
public final class ThreadExecutor: SerialExecutor {
    private final class Queue: Sendable {
        let state = Mutex<(jobs: [UnownedJob], stopped: Bool)>(([], false))
        let available = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()

    /// Starts the thread, named `name`.
    public init(name: String) {
        // The thread holds the executor unowned: the executor's owner (an actor) keeps it alive
        // while jobs exist, and `deinit` stops the thread.
        let executor = asUnownedSerialExecutor()
        let thread = Thread { [queue] in
            while true {
                queue.available.wait()
                let (job, stopped) = queue.state.withLock { state in
                    (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped)
                }
                if let job {
                    job.runSynchronously(on: executor)
                } else if stopped {
                    return
                }
            }
        }
        thread.name = name
        thread.start()
    }

    deinit {
        queue.state.withLock { $0.stopped = true }
        queue.available.signal()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        queue.state.withLock { $0.jobs.append(unowned) }
        queue.available.signal()
    }
}
