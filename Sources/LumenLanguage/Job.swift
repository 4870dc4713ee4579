import Display
import Evaluation
import Foundation
import Synchronization

/// Work started by `spawn { … }` that outlives its cell: it runs at utility (or background)
/// priority, keeps updating its displays, and is not cancelled by interrupting later cells.
public final class Job: HostObject {
    /// Where a job is.
    enum Status: String {
        case running, done, failed, cancelled
    }

    private struct State {
        var status = Status.running
        var result: Result<Value, ExecutionError>?
        var progress = 0.0
        var waiters: [UUID: CheckedContinuation<Result<Value, ExecutionError>, any Error>] = [:]
    }

    /// The job's number in the session.
    let number: Int
    /// The first line of the spawned code, for listings.
    let title: String
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// The job a task belongs to, so that batches can report progress.
    @TaskLocal package static var current: Job?

    init(number: Int, title: String) {
        self.number = number
        self.title = title
    }

    /// Starts `work` at `priority`.
    func start(priority: TaskPriority, _ work: @escaping @Sendable () async throws -> Value) {
        let task = Task(priority: priority) { [self] in
            let result: Result<Value, ExecutionError>
            do {
                result = .success(try await Job.$current.withValue(self) { try await work() })
            } catch let error as LumenError {
                result = .failure(error.executionError(in: SourceText(label: "Job \(number)", text: title)))
            } catch {
                result = .failure(Task.isCancelled || error is CancellationError ? cancelledError : ExecutionError(name: "Error", message: "\(error)", traceback: ["\(error)"]))
            }
            finish(result)
        }
        self.task.withLock { $0 = task }
    }

    /// What `result` gives once the job was cancelled (by `cancel`, `%reset` or shutdown).
    private var cancelledError: ExecutionError {
        ExecutionError(name: "Cancelled", message: "job \(number) was cancelled", traceback: ["Cancelled: job \(number) was cancelled"])
    }

    private func finish(_ result: Result<Value, ExecutionError>) {
        let waiters = state.withLock { state in
            state.result = result
            state.progress = 1
            switch result {
            case .success: state.status = .done
            case .failure(let error): state.status = error == cancelledError ? .cancelled : .failed
            }
            defer { state.waiters.removeAll() }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Records how far the job is (0 to 1).
    package func report(progress: Double) {
        state.withLock { $0.progress = min(max(progress, 0), 1) }
    }

    /// Cancels the job.
    func cancel() {
        task.withLock { $0 }?.cancel()
    }

    /// Waits for the job's result; cancelling the waiting task stops the wait, not the job.
    func result() async throws -> Result<Value, ExecutionError> {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let finished: Result<Value, ExecutionError>? = state.withLock { state in
                    if let result = state.result { return result }
                    state.waiters[id] = continuation
                    return nil
                }
                if let finished { continuation.resume(returning: finished) }
                if Task.isCancelled { resumeWaiter(id, throwing: CancellationError()) }
            }
        } onCancel: {
            resumeWaiter(id, throwing: CancellationError())
        }
    }

    /// Resumes waiter `id`, if it still waits: whoever removes it resumes it, exactly once.
    private func resumeWaiter(_ id: UUID, throwing error: any Error) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: error)
    }

    var status: Status { state.withLock { $0.status } }
    var progress: Double { state.withLock { $0.progress } }

    public var typeName: String { "Job" }
    /// The properties read at once, and the method.
    static let memberTable = MemberTable<Job>(properties: [
        ("progress", { .double($0.progress) }),
        ("status", { .string($0.status.rawValue) }),
    ], methods: [JobLibrary.cancel])
    /// The property read by waiting for the job (`awaitedProperty`).
    static let awaitedPropertyName = "result"

    /// The table's members, and `result`, which `awaitedProperty` answers.
    public var members: HostMembers {
        let table = Self.memberTable.members(of: self)
        return HostMembers(properties: table.properties + [Self.awaitedPropertyName], methods: table.methods) { try table.property($0) }
    }

    /// `result` waits for the job and gives its value, or its error; interrupting the wait
    /// leaves the job running.
    public func awaitedProperty(_ name: String, at location: SourceLocation) async throws -> Value? {
        guard name == Self.awaitedPropertyName else { return nil }
        switch try await result() {
        case .success(let value):
            return value
        case .failure(let error) where status == .cancelled:
            throw LumenError(.cancelled, error.message, at: location)
        case .failure(let error):
            throw LumenError(LumenError.Kind(rawValue: error.name) ?? .value, "job \(number) failed: \(error.message)", at: location)
        }
    }

    public var summary: String { "Job \(number) (\(status.rawValue), \(Int(progress * 100))%): \(title)" }
    public var mimeBundle: MIMEBundle { .plainText(summary) }
}

/// The jobs of a session.
final class JobList: Sendable {
    private let jobs = Mutex<[Job]>([])

    func add(_ title: String) -> Job {
        jobs.withLock { jobs in
            let job = Job(number: jobs.count + 1, title: title)
            jobs.append(job)
            return job
        }
    }

    var all: [Job] { jobs.withLock { $0 } }

    /// Cancels every job (for `%reset` and shutdown).
    func cancelAll() {
        for job in all { job.cancel() }
    }

    /// The jobs as a table.
    var table: Table {
        Table(columns: ["job", "status", "progress", "code"], rows: all.map { job in
            [String(job.number), job.status.rawValue, "\(Int(job.progress * 100))%", job.title]
        })
    }
}
