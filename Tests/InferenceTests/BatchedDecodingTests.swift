import Foundation
import GenerationTypes
import Testing
@testable import Inference

@Suite("Batched decoding", .serialized)
struct BatchedDecodingTests {
    /// Every architecture and weight format path: the two real models (Llama-style Q4_1 and
    /// Gemma 3 Q4_K_M), the synthetic models (`RealModelTests.synthetic`), and the tiny
    /// Llama in Q4_0 and Q4_K (the eight-row layout), Q6_K, Q8_0 and F16.
    static let models: [String] = SpeculativeDecodingTests.realModels.map { "real:" + $0 } + RealModelTests.synthetic.map { "synthetic:" + $0 }
        + ["quant-test-q4_0", "quant-test-q4_k", "quant-test-q6_k", "quant-test-q8_0", "quant-test-f16"].map { "shared:models/\($0).gguf" }

    static func path(_ model: String) throws -> String {
        let (kind, name) = (model.prefix { $0 != ":" }, String(model.drop { $0 != ":" }.dropFirst()))
        switch kind {
        case "real": return try TestData.realModel(name)
        case "synthetic": return try TestData.syntheticModel(name)
        default: return try TestData.path(name)
        }
    }

    static let prompts = [
        "Once upon a time",
        "The capital of France is Paris. The capital of Germany is",
        "1, 2, 3, 4, 5,",
        "Write a short poem about the sea, the wind and the small boats that go out every morning before the sun is up, and come back at night.",
        "Q: What is the boiling point of water?\nA:",
        "def fibonacci(n):",
    ]

    /// What one generation gave: its tokens, with the logits each was drawn from, and summary.
    struct Run {
        var ids: [Int32] = []
        var logits: [[Float]] = []
        var finishReason: FinishReason?
    }

    static func collect(_ stream: AsyncThrowingStream<TokenEvent, any Error>) async throws -> Run {
        var run = Run()
        for try await event in stream {
            switch event {
            case .token(let token):
                run.ids.append(token.id)
                run.logits.append(token.logits ?? [])
            case .finished(let summary): run.finishReason = summary.finishReason
            }
        }
        return run
    }

    /// Options for prompt `index`: lengths that differ, so sequences leave at different steps and
    /// waiting ones join while others decode.
    static func options(_ index: Int, sampling: SamplingOptions = .greedy) -> GenerationOptions {
        var options = GenerationOptions(sampling: sampling, maxTokens: [5, 14, 3, 10, 18, 7][index % 6])
        options.recordedLogits = .max
        return options
    }

    static func alone(_ model: LanguageModel, _ requests: [ModelSession.GenerationRequest]) async throws -> [Run] {
        let session = ModelSession(model: model, threads: 2, batchSize: 8)
        var runs: [Run] = []
        for request in requests {
            runs.append(try await collect(session.generate(tokens: request.tokens, options: request.options, pipeline: request.pipeline)))
        }
        return runs
    }

    static func together(_ session: ModelSession, _ requests: [ModelSession.GenerationRequest]) async throws -> [Run] {
        let streams = session.generate(together: requests)
        return try await withThrowingTaskGroup(of: (Int, Run).self) { group in
            for (index, stream) in streams.enumerated() {
                group.addTask { (index, try await collect(stream)) }
            }
            var runs = [Run](repeating: Run(), count: streams.count)
            for try await (index, run) in group { runs[index] = run }
            return runs
        }
    }

    /// Each run decoded together gave what it gives alone: its tokens, the logits each was drawn
    /// from, and how it ended.
    static func expectSame(_ together: [Run], _ alone: [Run], _ label: String) {
        for index in alone.indices {
            #expect(together[index].ids == alone[index].ids, "\(label), prompt \(index)")
            let sameLogits = together[index].logits == alone[index].logits
            #expect(sameLogits, "\(label), prompt \(index): the logits each token was drawn from")
            #expect(together[index].finishReason == alone[index].finishReason, "\(label), prompt \(index)")
        }
    }

    @Test("greedy output decoded together is each sequence's output alone, logit for logit, with sequences joining and leaving mid-batch",
          arguments: models)
    func greedyTogetherIsGreedyAlone(model name: String) async throws {
        let model = try LanguageModel(path: try Self.path(name))
        let requests = Self.prompts.indices.map {
            ModelSession.GenerationRequest(tokens: model.tokenizer.encode(Self.prompts[$0]), options: Self.options($0))
        }
        let alone = try await Self.alone(model, requests)
        // Three sequences for six generations, prompts read in batches of eight: the later ones
        // wait, then join while the others decode.
        let session = ModelSession(model: model, threads: 2, batchSize: 8, sequences: 3)
        let together = try await Self.together(session, requests)
        Self.expectSame(together, alone, name)
        let statistics = session.batchStatistics
        #expect(statistics.largest == 3, "\(name): \(statistics)")
        #expect(statistics.tokens == alone.map(\.ids.count).reduce(0, +) - requests.count, "\(name): every token but the last of each run once")
        #expect(statistics.passesBySequences.reduce(0, +) == statistics.passes && statistics.passesBySequences.count == 3)
        #expect(statistics.passesBySequences.enumerated().map { ($0.offset + 1) * $0.element }.reduce(0, +) == statistics.tokens)
        #expect(session.cachedTokensInUse == 0, "\(name): nothing runs")
    }

    /// Four samples of one prompt, seeds 0 to 3, and the prompt.
    static func samples(_ model: LanguageModel) -> ([ModelSession.GenerationRequest], [Int32]) {
        let prompt = model.tokenizer.encode("Tell me a story about a dragon.")
        return ((0..<4).map { index in
            ModelSession.GenerationRequest(tokens: prompt, options: options(1, sampling: SamplingOptions(temperature: 0.9, seed: UInt64(index))))
        }, prompt)
    }

    @Test("seeded samples decoded together are each one's samples alone")
    func seededSamplesAreUnchanged() async throws {
        let model = try LanguageModel(path: try TestData.realModel(SpeculativeDecodingTests.realModels[0]))
        let (requests, _) = Self.samples(model)
        let alone = try await Self.alone(model, requests)
        let together = try await Self.together(ModelSession(model: model, threads: 2, batchSize: 8, sequences: 4), requests)
        #expect(together.map(\.ids) == alone.map(\.ids))
        let sameLogits = together.map(\.logits) == alone.map(\.logits)
        #expect(sameLogits, "the logits each token was drawn from")
        #expect(Set(alone.map(\.ids)).count == 4, "four seeds, four samples")
    }

    @Test("samples of one prompt read it once, and prompts sharing a prefix read its whole batches once, with output unchanged")
    func sharedPrefixesAreReadOnce() async throws {
        let model = try LanguageModel(path: try TestData.realModel(SpeculativeDecodingTests.realModels[0]))
        let (samples, prompt) = Self.samples(model)
        let session = ModelSession(model: model, threads: 2, batchSize: 8, sequences: 4)
        let together = try await Self.together(session, samples)
        #expect(together.map(\.ids) == (try await Self.alone(model, samples)).map(\.ids))
        #expect(session.batchStatistics.promptTokens == prompt.count)
        // A system prompt of two whole batches, then each its own question.
        let system = model.tokenizer.encode("You are a helpful assistant who answers questions about geography in one short sentence.\n")
        #expect(system.count >= 16)
        let questions = ["Where is Paris?", "What is the longest river?", "Which ocean is largest?"].map { index in
            ModelSession.GenerationRequest(tokens: system + model.tokenizer.encode(index, addSpecial: false), options: Self.options(0))
        }
        let fresh = ModelSession(model: model, threads: 2, batchSize: 8, sequences: 3)
        let answers = try await Self.together(fresh, questions)
        #expect(answers.map(\.ids) == (try await Self.alone(model, questions)).map(\.ids))
        let shared = system.count / 8 * 8
        #expect(fresh.batchStatistics.promptTokens == questions.map(\.tokens.count).reduce(0, +) - 2 * shared)
    }

    @Test("a sequence stopped or dropped mid-batch ends within a step and leaves the others as they would be alone")
    func cancellationIsPerSequence() async throws {
        let model = try LanguageModel(path: try TestData.realModel(SpeculativeDecodingTests.realModels[0]))
        var requests = Self.prompts.prefix(4).indices.map {
            ModelSession.GenerationRequest(tokens: model.tokenizer.encode(Self.prompts[$0]), options: Self.options(4))
        }
        let alone = try await Self.alone(model, requests)
        // Sequence 1 is stopped after its third token (as an interrupt would then), sequence 2's
        // reader goes after its second.
        let stopped = StopSignal()
        requests[1].stop = stopped
        requests[1].pipeline = GenerationPipeline(processors: [SpeculativeDecodingTests.StopsAfter(stop: stopped, after: 3)])
        let session = ModelSession(model: model, threads: 2, batchSize: 8, sequences: 4)
        let streams = session.generate(together: requests)
        let runs = try await withThrowingTaskGroup(of: (Int, Run).self) { group in
            for (index, stream) in streams.enumerated() {
                group.addTask {
                    var run = Run()
                    for try await event in stream {
                        switch event {
                        case .token(let token):
                            run.ids.append(token.id)
                            if index == 2 && run.ids.count == 2 { return (index, run) }
                        case .finished(let summary): run.finishReason = summary.finishReason
                        }
                    }
                    return (index, run)
                }
            }
            var runs = [Run](repeating: Run(), count: streams.count)
            for try await (index, run) in group { runs[index] = run }
            return runs
        }
        #expect(runs[1].finishReason == .cancelled)
        #expect(runs[1].ids == Array(alone[1].ids.prefix(3)))
        #expect(runs[2].ids == Array(alone[2].ids.prefix(2)))
        for index in [0, 3] { #expect(runs[index].ids == alone[index].ids, "prompt \(index)") }
        // The session goes on: the dropped and stopped sequences' places are free again.
        let again = try await Self.together(session, Array(requests.prefix(1)))
        #expect(again[0].ids == alone[0].ids)
    }

    @Test("generations with hooks decode together with plain ones, each as it is alone, logit for logit; each hook sees its own sequence's rows only")
    func hookedGenerationsBatch() async throws {
        let model = try LanguageModel(path: try TestData.realModel(SpeculativeDecodingTests.realModels[0]))
        let c = model.configuration
        let direction = (0..<c.embeddingLength).map { Float(sin(Double($0))) }
        // Fresh hooks for each run: a capture keeps what it saw.
        func requests() throws -> ([ModelSession.GenerationRequest], ActivationCapture) {
            let capture = ActivationCapture([.blockOutput], blocks: [4])
            let hooks: [[any ForwardHook]] = [[], [ControlVector(direction: direction, blocks: 3...5).scaled(by: 4).steering()],
                                              [ActivationEdit.zeroing(.feedForwardOutput, block: 2)], [capture]]
            // One length for all: each still decodes when the longest prompt has been read.
            let made = try hooks.indices.map { index in
                ModelSession.GenerationRequest(tokens: model.tokenizer.encode(Self.prompts[index]), options: Self.options(1),
                                               pipeline: try GenerationPipeline(options: Self.options(1), model: model, hooks: hooks[index]))
            }
            return (made, capture)
        }
        let (single, aloneCapture) = try requests()
        let alone = try await Self.alone(model, single)
        let (batched, togetherCapture) = try requests()
        let session = ModelSession(model: model, threads: 2, batchSize: 8, sequences: 4)
        let together = try await Self.together(session, batched)
        Self.expectSame(together, alone, "hooks")
        #expect(session.batchStatistics.largest >= 3, "\(session.batchStatistics)")
        // The hooks changed their own generations: steered and ablated runs differ from plain ones.
        let plain = try await Self.alone(model, batched.map { ModelSession.GenerationRequest(tokens: $0.tokens, options: $0.options) })
        #expect(plain[1].logits != alone[1].logits, "steered")
        #expect(plain[2].logits != alone[2].logits, "ablated")
        #expect(plain[0].logits == alone[0].logits && plain[3].logits == alone[3].logits, "unchanged")
        // The capture saw its sequence's rows only, as alone: the prompt's and each token's but the last.
        let kept = togetherCapture.take(.blockOutput, block: 4)
        #expect(kept == aloneCapture.take(.blockOutput, block: 4))
        #expect(kept.count == (batched[3].tokens.count + alone[3].ids.count - 1) * c.embeddingLength)
    }
}
