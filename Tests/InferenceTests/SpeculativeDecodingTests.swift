import Foundation
import GGUF
import GenerationTypes
import Quantization
import Testing
@testable import Inference

@Suite("Speculative decoding", .serialized)
struct SpeculativeDecodingTests {
    /// A task that repeats its prompt: drafts from the context are mostly right.
    static let copying = """
        Copy the text below exactly.

        Text: The city council met on Tuesday evening to discuss the new budget for the coming year. After a long debate, the members \
        agreed to increase funding for public parks, repair the old bridge over the river, and hire more teachers for the primary schools.

        Copy: The city council
        """

    static let realModels = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]

    /// What one generation gave: its tokens (with every step's logits) and summary.
    struct Run {
        var tokens: [GeneratedToken] = []
        var summary: GenerationSummary?
        var ids: [Int32] { tokens.map(\.id) }
    }

    static func run(_ session: ModelSession, _ prompt: String, sampling: SamplingOptions, maxTokens: Int = 48, speculation: Speculation? = nil,
                    draft: LanguageModel? = nil) async throws -> Run {
        var options = GenerationOptions(sampling: sampling, maxTokens: maxTokens)
        options.recordedLogits = .max
        options.speculation = speculation
        var pipeline = try GenerationPipeline(options: options, model: session.model)
        pipeline.draftModel = draft
        var run = Run()
        for try await event in session.generate(prompt, options: options, pipeline: pipeline) {
            switch event {
            case .token(let token): run.tokens.append(token)
            case .finished(let summary): run.summary = summary
            }
        }
        return run
    }

    /// `model` requantized to Q4_0 in a temporary file: a draft model that shares its vocabulary
    /// and drafts some tokens wrong.
    static func requantized(_ path: String) throws -> LanguageModel {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-draft-\(UUID().uuidString).gguf").path
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let scheme = try #require(QuantizationScheme(name: "Q4_0"))
        _ = try ModelQuantizer(scheme: scheme, threads: 2).quantize(GGUFFile(path: path), to: destination)
        return try LanguageModel(path: destination)
    }

    @Test("greedy output by prompt lookup and by a draft model is plain greedy decoding's, token for token and logit for logit",
          arguments: realModels)
    func greedyIsUnchanged(file: String) async throws {
        let path = try TestData.realModel(file)
        let model = try LanguageModel(path: path)
        let session = ModelSession(model: model, threads: 2)
        let plain = try await Self.run(session, Self.copying, sampling: .greedy)
        let lookup = try await Self.run(session, Self.copying, sampling: .greedy, speculation: Speculation(lookupNgram: 2))
        let draft = try Self.requantized(path)
        let drafted = try await Self.run(session, Self.copying, sampling: .greedy, speculation: Speculation(draftProbabilityMin: 0), draft: draft)
        for (name, speculative) in [("lookup", lookup), ("draft model", drafted)] {
            #expect(speculative.ids == plain.ids, "\(file), \(name)")
            // The logits each token was drawn from, bit for bit: verified as decoded one by one.
            #expect(zip(speculative.tokens, plain.tokens).allSatisfy { $0.logits == $1.logits }, "\(file), \(name)")
            let summary = try #require(speculative.summary)
            #expect(summary.draftedTokens > 0 && summary.acceptedTokens > 0 && summary.acceptedTokens <= summary.draftedTokens, "\(file), \(name)")
        }
        // Most of a copy is drafted right from the prompt.
        #expect(try #require(lookup.summary).acceptedTokens > plain.ids.count / 2)
    }

    @Test("sampled output keeps the model's distribution: with one seed it is plain sampling's, token for token, and the cache holds exactly the tokens run")
    func samplingIsUnchanged() async throws {
        let path = try TestData.realModel(Self.realModels[0])
        let model = try LanguageModel(path: path)
        let session = ModelSession(model: model, threads: 2)
        let draft = try Self.requantized(path)
        // Drafted and accepted tokens over the seeds, by lookup and by the draft model.
        var totals = [(drafted: 0, accepted: 0), (drafted: 0, accepted: 0)]
        for seed: UInt64 in [1, 2, 3] {
            let sampling = SamplingOptions(temperature: 0.9, seed: seed)
            let plain = try await Self.run(session, Self.copying, sampling: sampling, maxTokens: 40)
            let lookup = try await Self.run(session, Self.copying, sampling: sampling, maxTokens: 40, speculation: Speculation(lookupNgram: 3))
            let prompt = model.tokenizer.encode(Self.copying)
            // Drafts past the last token drawn were dropped: the cache holds the prompt and every
            // generated token but the last (which never ran).
            #expect(await session.cachedPrefix().tokens == prompt + lookup.ids.dropLast())
            let drafted = try await Self.run(session, Self.copying, sampling: sampling, maxTokens: 40, speculation: Speculation(draftProbabilityMin: 0.2),
                                             draft: draft)
            #expect(lookup.ids == plain.ids, "seed \(seed), lookup")
            #expect(drafted.ids == plain.ids, "seed \(seed), draft model")
            for (index, summary) in [lookup.summary, drafted.summary].enumerated() {
                let summary = try #require(summary)
                totals[index].drafted += summary.draftedTokens
                totals[index].accepted += summary.acceptedTokens
            }
        }
        // Sampling refuses some drafts and accepts others: both paths ran (one seed alone may
        // accept none, as the portable kernels' last bits decide for seed 1).
        for (name, total) in zip(["lookup", "draft model"], totals) {
            #expect(total.drafted > total.accepted && total.accepted > 0, "\(name): \(total)")
        }
    }

    /// Raises `stop` once `after` tokens have joined the sequence, as an interrupt would then.
    struct StopsAfter: LogitProcessor {
        let stop: StopSignal
        let after: Int
        var seen = 0
        func process(_ logits: UnsafeMutableBufferPointer<Float>) {}
        mutating func didAppend(_ token: Int32) {
            seen += 1
            if seen == after { stop.raise() }
        }
    }

    @Test("a stop raised while drafts are verified ends the generation at the next token, the cache holding exactly the tokens run")
    func stopsWithinOneToken() async throws {
        let model = try LanguageModel(path: try TestData.realModel(Self.realModels[0]))
        let session = ModelSession(model: model, threads: 2)
        let plain = try await Self.run(session, Self.copying, sampling: .greedy, maxTokens: 12)
        for speculation in [Speculation(lookupNgram: 2), Speculation(draftProbabilityMin: 0)] {
            let stop = StopSignal()
            var options = GenerationOptions(sampling: .greedy, maxTokens: 48)
            options.speculation = speculation
            var pipeline = GenerationPipeline(processors: [StopsAfter(stop: stop, after: 9)], stopConditions: [EndOfGenerationStop(tokenizer: model.tokenizer)])
            pipeline.draftModel = speculation.lookupNgram == nil ? model : nil
            var ids: [Int32] = []
            var summary: GenerationSummary?
            for try await event in session.generate(Self.copying, options: options, pipeline: pipeline, stop: stop) {
                switch event {
                case .token(let token): ids.append(token.id)
                case .finished(let finished): summary = finished
                }
            }
            #expect(try #require(summary).finishReason == .cancelled)
            #expect(ids == Array(plain.ids.prefix(9)), "\(speculation)")
            #expect(await session.cachedPrefix().tokens == model.tokenizer.encode(Self.copying) + ids, "\(speculation)")
        }
    }

    @Test("a draft model of another vocabulary is refused, naming the first token they spell differently")
    func draftVocabularyIsChecked() throws {
        let target = try LanguageModel(path: try TestData.realModel(Self.realModels[0]))
        let other = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        #expect { try GenerationPipeline.checkDraft(other, for: target) } throws: { error in
            "\(error)".contains("stories260K.gguf") && "\(error)".contains("need one vocabulary")
        }
        #expect(throws: Never.self) { try GenerationPipeline.checkDraft(target, for: target) }
    }

    @Test("prompt lookup drafts what followed the latest earlier occurrence of the last n tokens")
    func promptLookup() {
        let lookup = PromptLookup(ngram: 2)
        #expect(lookup.draft(after: [1, 2, 3, 4, 1, 2, 5, 6, 1, 2], count: 3) == [5, 6, 1])
        #expect(lookup.draft(after: [1, 2, 3, 4, 1, 2], count: 8) == [3, 4, 1, 2])
        #expect(lookup.draft(after: [1, 2, 3, 4], count: 3) == [])
        #expect(PromptLookup(ngram: 3).draft(after: [7, 1, 2, 9, 1, 2], count: 3) == [])
    }

    /// Drafts `count` tokens every time it is asked.
    struct AlwaysDrafts: Drafter {
        func draft(after context: [Int32], count: Int) -> [Int32] { Array(repeating: 0, count: count) }
        var asksCost: Bool { true }
    }

    @Test("drafts that keep failing are asked for less and less often; accepted ones grow back to the limit")
    func draftLengthAdapts() {
        var speculator = Speculator(drafter: AlwaysDrafts(), draftMax: 16)
        var proposed = 0
        for _ in 0..<200 {
            let drafts = speculator.draft(after: [1], room: 100)
            if !drafts.isEmpty { speculator.verified(drafts.count, accepted: 0) }
            proposed += drafts.count
        }
        // 200 steps of failed drafts cost fewer than 200 drafted tokens: one at a time, then pauses.
        #expect(proposed < 60)
        // After the pause (at most 1023 steps) and a few accepted drafts, they are back at the limit.
        var longest = 0
        for _ in 0..<1100 {
            let drafts = speculator.draft(after: [1], room: 100)
            if !drafts.isEmpty { speculator.verified(drafts.count, accepted: drafts.count) }
            longest = max(longest, drafts.count)
        }
        #expect(longest == 16)
        #expect(speculator.draft(after: [1], room: 5).count == 5)
    }
}
