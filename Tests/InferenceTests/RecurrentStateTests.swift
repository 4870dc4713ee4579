import Foundation
import GGUF
import GenerationTypes
import Testing
@testable import Inference

/// A hybrid recurrent model's state (the synthetic Qwen3.5's Gated DeltaNet layers and
/// LFM2-MoE's short convolutions, beside attention) in a session, as the KV cache is: continued when a prompt extends what the cache
/// holds, read again from the start otherwise (a recurrent state cannot go back), saved and
/// restored, and consistent after an interrupted read. The oracle is a new session reading the
/// whole prompt, whose own output the architecture tests check against llama.cpp.
@Suite("Recurrent state in a session")
struct RecurrentStateTests {
    /// The synthetic hybrid models, and the first of their attention layers.
    static let models = ["qwen35": 3, "lfm2moe": 2]

    static func model(_ name: String = "qwen35") throws -> LanguageModel { try LanguageModel(path: try TestData.syntheticModel(name)) }

    /// The ids and every step's logits of a greedy generation from `tokens`, and how many prompt tokens it reused.
    func run(_ session: ModelSession, _ tokens: [Int32], reusingAny: Bool = false) async throws -> (ids: [Int32], logits: [[Float]], reused: Int) {
        var options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: 6, stopAtEndOfSequence: false)
        options.recordedLogits = 6
        options.reusesCachedPrefix = reusingAny
        var collector = GenerationCollector()
        for try await event in session.generate(tokens: tokens, options: options) { _ = collector.add(event) }
        return (collector.tokens.map(\.id), collector.tokens.compactMap(\.logits), collector.summary?.reusedPromptTokens ?? -1)
    }

    static func largestDifference(_ a: [[Float]], _ b: [[Float]]) -> Float {
        guard a.count == b.count else { return .infinity }
        return zip(a, b).map { zip($0, $1).map { abs($0 - $1) }.max() ?? 0 }.max() ?? 0
    }

    @Test("a prompt that extends the whole cache continues the state; one that shares only part of it is read again; each gives a fresh read's tokens and logits",
          arguments: models.keys.sorted())
    func continuesOnlyWhole(name: String) async throws {
        let model = try Self.model(name)
        let session = ModelSession(model: model, threads: 2, batchSize: 8)
        let prompt = session.tokenize("A recurrent state carries the whole history of a sequence in a fixed size.")
        let first = try await run(session, prompt)
        #expect(first.reused == 0)
        // The cache holds the prompt and the generated tokens but the last: a prompt of all of
        // them continues it without reading them again.
        let extended = prompt + first.ids.dropLast() + session.tokenize(" And more.", addSpecial: false)
        let continued = try await run(session, extended, reusingAny: true)
        #expect(continued.reused == prompt.count + first.ids.count - 1)
        let fresh = try await run(ModelSession(model: model, threads: 2, batchSize: 8), extended)
        // Read in other batches than a fresh read's (as any reuse of a conversation's cache), the
        // logits agree to F32 rounding, not bit for bit.
        #expect(continued.ids == fresh.ids && Self.largestDifference(continued.logits, fresh.logits) < 1e-3,
                "\(Self.largestDifference(continued.logits, fresh.logits))")
        // A prompt sharing only the first tokens cannot take the state back to them.
        let diverging = Array(prompt.prefix(9)) + session.tokenize(" something else entirely", addSpecial: false)
        let reread = try await run(session, diverging, reusingAny: true)
        let freshDiverging = try await run(ModelSession(model: model, threads: 2, batchSize: 8), diverging)
        #expect(reread.reused == 0)
        #expect(reread.ids == freshDiverging.ids && reread.logits == freshDiverging.logits)
    }

    @Test("a saved state holds the recurrent state: restored in another session, it continues as the original", arguments: models.keys.sorted())
    func savedStateContinues(name: String) async throws {
        let model = try Self.model(name)
        let session = ModelSession(model: model, threads: 2, batchSize: 8)
        let prompt = session.tokenize("Saved states hold keys, values and the recurrent state.")
        _ = try await session.prefill(prompt)
        let saved = await session.cachedPrefix()
        #expect(saved.byteCount == session.bytesPerCachedToken * prompt.count + session.recurrentStateBytes && session.recurrentStateBytes > 0)
        let other = ModelSession(model: model, threads: 2, batchSize: 8)
        await other.restore(saved)
        let longer = prompt + session.tokenize(" It continues", addSpecial: false)
        let restored = try await run(other, longer, reusingAny: true)
        let fresh = try await run(ModelSession(model: model, threads: 2, batchSize: 8), longer)
        #expect(restored.reused == prompt.count)
        // Read in other batches than the fresh read's (a mixture of experts then multiplies
        // other groups of rows): the logits agree to F32 rounding.
        #expect(restored.ids == fresh.ids && Self.largestDifference(restored.logits, fresh.logits) < 1e-3,
                "\(Self.largestDifference(restored.logits, fresh.logits))")
    }

    @Test("a read interrupted between batches leaves the state where the cache is: the next generation is a fresh read's", arguments: models.keys.sorted())
    func interruptedReadStaysConsistent(name: String) async throws {
        let model = try Self.model(name)
        let session = ModelSession(model: model, threads: 1, batchSize: 4)
        let prompt = session.tokenize(String(repeating: "Interrupts keep the state consistent. ", count: 20))
        let stop = StopSignal()
        stop.raise()
        var options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: 4)
        options.reusesCachedPrefix = true
        for try await _ in session.generate(tokens: prompt, options: options, stop: stop) {}
        let after = try await run(session, prompt, reusingAny: true)
        let fresh = try await run(ModelSession(model: model, threads: 1, batchSize: 4), prompt)
        #expect(after.ids == fresh.ids && after.logits == fresh.logits)
    }

    @Test("attention patterns, head ablations and traces of heads are refused for recurrent blocks, naming the attention layers",
          arguments: models.sorted { $0.key < $1.key })
    func noAttentionInRecurrentBlocks(name: String, attention: Int) async throws {
        let model = try Self.model(name)
        let session = ModelSession(model: model, threads: 1, batchSize: 8)
        let tokens = session.tokenize("Which blocks attend?")
        let kind = name == "qwen35" ? "Gated DeltaNet" : "short convolution"
        let expected = "block 0 is a recurrent (\(kind)) layer without attention heads; the attention layers are \(attention)"
        do {
            _ = try await session.attentionPattern(tokens, block: 0)
            Issue.record("an attention pattern of a recurrent block")
        } catch {
            #expect(error.reason == expected)
        }
        #expect(throws: ModelError.self) { try ActivationEdit.zeroing(.headOutputs, block: 0, heads: [0], headDimension: model.configuration.headDimension).check(model) }
        #expect(throws: ModelError.self) { try ActivationCapture([.attentionProbabilities]).check(model) }
        try ActivationCapture([.attentionProbabilities], blocks: [attention]).check(model)
        let pattern = try await session.attentionPattern(tokens, block: attention)
        #expect(pattern.weights.count == model.configuration.headCount && pattern.weights[0].count == tokens.count)
    }

    @Test("speculative decoding is not used on a recurrent model: the output is plain greedy decoding's")
    func noSpeculation() async throws {
        let model = try Self.model()
        let session = ModelSession(model: model, threads: 2, batchSize: 8)
        let prompt = session.tokenize("one two three one two three one two three one two")
        var options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: 8, stopAtEndOfSequence: false)
        options.speculation = Speculation(lookupNgram: 2, draftMax: 4)
        var collector = GenerationCollector()
        for try await event in session.generate(tokens: prompt, options: options) { _ = collector.add(event) }
        let plain = try await run(ModelSession(model: model, threads: 2, batchSize: 8), prompt)
        #expect(Array(collector.tokens.map(\.id).prefix(6)) == plain.ids && collector.summary?.draftedTokens == 0)
    }
}
