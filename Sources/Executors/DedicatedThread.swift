import Foundation

/// Runs blocking work (file I/O, page faults, parsing) on a thread of its own, so it never
/// occupies Swift's cooperative pool.
public enum DedicatedThread {
    /// Runs `work` on a new thread named `name` and returns its result; the continuation is
    /// resumed exactly once, when the work ends.
    public static func run<Result: Sendable, Failure: Error>(
        name: String, _ work: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            start(name: name) {
                do throws(Failure) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    /// Starts `work` on a new thread named `name`, at `quality` of service, without waiting.
    public static func start(name: String, quality: QualityOfService = .userInitiated, _ work: @escaping @Sendable () -> Void) {
        let thread = Thread(block: work)
        thread.name = name
        thread.qualityOfService = quality
        thread.start()
    }
}
