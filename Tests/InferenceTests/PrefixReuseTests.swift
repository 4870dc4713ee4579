import Foundation
import GenerationTypes
import Testing
@testable import Inference

/// A prompt that starts where the cache left off reuses it, and gives exactly what a fresh read
/// gives: the oracle is a new session reading the whole prompt.
@Suite("Reusing a cached prompt")
struct PrefixReuseTests {
    /// Every step's logits and the tokens of a seeded generation.
    func run(_ session: ModelSession, _ prompt: String, seed: UInt64) async throws -> (ids: [Int32], logits: [[Float]], reused: Int) {
        var options = GenerationOptions(sampling: SamplingOptions(temperature: 0.9, seed: seed), maxTokens: 10, stopAtEndOfSequence: false)
        options.recordedLogits = 10
        var collector = GenerationCollector()
        for try await event in session.generate(prompt, options: options) { _ = collector.add(event) }
        return (collector.tokens.map(\.id), collector.tokens.compactMap(\.logits), collector.summary?.reusedPromptTokens ?? -1)
    }

    @Test("whole batches of an earlier prompt are reused, and tokens and logits are a fresh read's, bit for bit")
    func exactReuse() async throws {
        let model = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        let story = String(repeating: "Once upon a time there was a little girl named Lily who loved to play outside. ", count: 6)
        let session = ModelSession(model: model, threads: 2, batchSize: 32)
        let first = try await run(session, story + "One day", seed: 3)
        #expect(first.reused == 0)
        let promptCount = session.tokenize(story + "One day, she").count
        let second = try await run(session, story + "One day, she", seed: 4)
        let fresh = try await run(ModelSession(model: model, threads: 2, batchSize: 32), story + "One day, she", seed: 4)
        #expect(second.reused > 0 && second.reused % 32 == 0 && second.reused >= promptCount - 64, "reused \(second.reused) of \(promptCount)")
        #expect(second.ids == fresh.ids)
        #expect(second.logits == fresh.logits)
        // The cache now ends with generated tokens, read one at a time: a prompt that repeats them
        // reuses only the prompt's whole batches before them.
        let continued = story + "One day, she" + session.detokenize(second.ids)
        let third = try await run(session, continued, seed: 5)
        let freshThird = try await run(ModelSession(model: model, threads: 2, batchSize: 32), continued, seed: 5)
        #expect(third.reused <= promptCount / 32 * 32 && third.reused > 0)
        #expect(third.ids == freshThird.ids && third.logits == freshThird.logits)
    }
}
