import ArgumentParser
import Executors
import Foundation
import GGUF
import Inference
import LumenKit
import Scoring

/// The options `lumen perplexity` and `lumen kld` share: the text file, llama-perplexity's
/// context and the threads.
struct ScoringArguments: ParsableArguments {
    @Argument(help: "A text file to score (UTF-8).")
    var file: String

    @Option(name: [.customLong("ctx"), .customShort("c")], parsing: .unconditional, help: "Tokens per window, as llama-perplexity's -c: each window scores its second half.")
    var context = 512

    @Option(name: [.customLong("threads"), .customShort("t")], parsing: .unconditional, help: "Threads for the matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup(title: "KV cache") var cache: CacheTypeArguments

    func validate() throws {
        guard context >= 4 else { throw ValidationError("--ctx must be at least 4, got \(context)") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1, got \(threads)") }
    }

    /// The file's tokens and the windows to score with `base` (and to compare `other` with it,
    /// which must tokenize the text alike), read and tokenized on a thread of their own.
    func windows(base: ModelSession, other: ModelSession? = nil) async throws -> (tokens: [Int32], windows: ScoringWindows) {
        let (file, context) = (file, context)
        return try await DedicatedThread.run(name: "lumen-tokenize") { () throws(any Error) in
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandError("cannot read \(file)") }
            let text = String(decoding: data, as: UTF8.self)
            do throws(ScoringError) {
                if let other { return try TextScoring.windows(for: text, base: base, model: other, context: context) }
                return try TextScoring.windows(for: text, session: base, context: context)
            } catch {
                let hint = error.fittingContext.map { "; --ctx \($0) fits it (or score a longer text)" } ?? ""
                throw CommandError("\(file): " + error.reason + hint)
            }
        }
    }

    /// The model at `path` (loaded on a thread of its own), its session's cache one window long,
    /// applying the adapters of `lora` when given.
    func container(_ path: String, lora: LoRAArguments? = nil) async throws -> ModelContainer {
        let model = try await WeightCache.shared.load(ModelLocator.resolve(path))
        return ModelContainer(model: model, settings: ModelContainer.Settings(
            contextLength: context, threads: threads, sequencesPerSession: 1, batchSize: min(context, 512),
            adapters: try await lora?.adapters(for: model) ?? .none, cacheType: try cache.resolved(for: model, name: path)))
    }

    /// Runs `work` in a task that Ctrl-C (or SIGTERM) cancels, and waits for it.
    static func interruptibly<Result: Sendable>(_ work: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let task = Task { try await work() }
        let interrupts = SignalListener(signals: [SIGINT, SIGTERM]) { _ in task.cancel() }
        defer { interrupts.cancel() }
        return try await task.value
    }
}
