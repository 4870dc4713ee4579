import Foundation
import GenerationTypes
import Grammars
import Testing
@testable import Inference
import Scoring

/// Collects a whole generation.
func collect(_ stream: AsyncThrowingStream<TokenEvent, any Error>) async throws -> (ids: [Int32], text: String, summary: GenerationSummary?) {
    var ids: [Int32] = []
    var text = ""
    var summary: GenerationSummary?
    for try await event in stream {
        switch event {
        case .token(let token):
            ids.append(token.id)
            text += token.text
        case .finished(let finished):
            summary = finished
        }
    }
    return (ids, text, summary)
}

func greedy(_ count: Int) -> GenerationOptions {
    GenerationOptions(sampling: .greedy, maxTokens: count, stopAtEndOfSequence: false)
}

@Suite("Generation")
struct GenerationTests {
    @Test("greedy generation reproduces llama.cpp's ids", arguments: ["stories260K", "quant-test-f32"])
    func greedyIDs(model name: String) async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/\(name).gguf")), threads: 2)
        let cases = try ReferenceCase.load(name)
        for (index, reference) in cases.enumerated() {
            let prompt = index == 0 ? "Once upon a time" : "Lily and Ben were"
            #expect(session.tokenize(prompt) == reference.promptIDs)
            let (ids, _, summary) = try await collect(session.generate(prompt, options: greedy(reference.greedyIDs.count)))
            #expect(ids == reference.greedyIDs)
            #expect(summary?.finishReason == .length)
            #expect(summary?.generatedTokens == reference.greedyIDs.count)
        }
    }

    /// Bans one token.
    struct Ban: LogitProcessor {
        let token: Int32
        func process(_ logits: UnsafeMutableBufferPointer<Float>) { logits[Int(token)] = -.infinity }
    }

    /// Picks the tokens of a script in turn.
    struct Scripted: TokenSampler {
        var script: [Int32]
        mutating func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32 { script.removeFirst() }
    }

    /// Stops at one token.
    struct StopAt: StopCondition {
        let token: Int32
        func finish(at token: Int32) -> FinishReason? { token == self.token ? .stop : nil }
    }

    @Test("a pipeline's processors, sampler and stop conditions are values passed in, each checked against llama.cpp's logits")
    func pipelineParts() async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), threads: 1)
        let reference = try ReferenceCase.load("stories260K")[0]
        func logSoftmax(_ row: [Float], _ token: Int32) -> Float {
            let maximum = row.max() ?? 0
            return row[Int(token)] - maximum - log(row.reduce(0) { $0 + exp($1 - maximum) })
        }
        // A processor that bans llama.cpp's first greedy token: the runner-up of its logits comes
        // instead, reported with its log-probability under the model, not under the processed logits.
        let banned = try await GenerationCollector.collect(session.generate("Once upon a time", options: greedy(1),
                                                                             pipeline: GenerationPipeline(processors: [Ban(token: reference.greedyIDs[0])])))
        var row = reference.logits[0]
        row[Int(reference.greedyIDs[0])] = -.infinity
        let runnerUp = GreedySampler.argmax(row)
        let first = try #require(banned.tokens.first)
        #expect(first.id == runnerUp)
        #expect(abs(first.logProbability - logSoftmax(reference.logits[0], runnerUp)) < 0.01)
        // A sampler keeps its state from step to step; each token's log-probability is llama.cpp's.
        let script = Array(reference.greedyIDs.prefix(reference.logits.count))
        let scripted = try await GenerationCollector.collect(session.generate("Once upon a time", options: greedy(script.count),
                                                                               pipeline: GenerationPipeline(sampler: Scripted(script: script))))
        #expect(scripted.tokens.map(\.id) == script)
        for (step, token) in scripted.tokens.enumerated() {
            #expect(abs(token.logProbability - logSoftmax(reference.logits[step], token.id)) < 0.01, "step \(step)")
        }
        // A stop condition ends the generation at its token, whose text is not shown.
        let stopIndex = try #require(reference.greedyIDs.indices.first { $0 >= 3 && !reference.greedyIDs[..<$0].contains(reference.greedyIDs[$0]) })
        let stopped = try await GenerationCollector.collect(session.generate("Once upon a time", options: greedy(64),
                                                                              pipeline: GenerationPipeline(stopConditions: [StopAt(token: reference.greedyIDs[stopIndex])])))
        #expect(stopped.tokens.map(\.id) == Array(reference.greedyIDs[...stopIndex]))
        #expect(stopped.summary?.finishReason == .stop)
        let before = try await GenerationCollector.collect(session.generate("Once upon a time", options: greedy(stopIndex)))
        #expect(stopped.text == before.text)
    }

    @Test("a generation that fills the context ends with finish reason context, every slot used")
    func contextFull() async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), contextLength: 16, threads: 1)
        let prompt = session.tokenize("Once upon a time")
        let (ids, _, summary) = try await collect(session.generate("Once upon a time", options: greedy(100)))
        #expect(summary?.finishReason == .context)
        #expect(ids.count == 16 - prompt.count + 1)
    }

    @Test("streamed text equals llama.cpp's concatenated pieces, with no broken characters")
    func streamedText() async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/quant-test-f32.gguf")), threads: 1)
        let reference = try ReferenceCase.load("quant-test-f32")[0]
        let (_, text, _) = try await collect(session.generate("Once upon a time", options: greedy(reference.greedyIDs.count)))
        #expect(Array(text.utf8) == Array(reference.greedyText.utf8))
    }

    @Test("cancelling mid-generation stops early, and the session then matches a fresh one")
    func cancellation() async throws {
        // A model slow enough that the consumer, cancelling at its fifth token, cannot be outrun
        // by a thousand tokens however loaded the machine (SmolLM2 makes ~100 a second on one
        // thread; stories260K makes 10 000, enough to fill a starved consumer's buffer).
        let model = try LanguageModel(path: try TestData.realModel("SmolLM2-135M-Instruct.Q4_1.gguf"))
        let session = ModelSession(model: model, contextLength: 4096, threads: 1)
        let consumer = Task {
            var received = 0
            var reason: FinishReason?
            for try await event in session.generate("Once upon a time", options: greedy(100_000_000)) {
                switch event {
                case .token:
                    received += 1
                    if received == 5 { withUnsafeCurrentTask { $0?.cancel() } }
                case .finished(let summary):
                    reason = summary.finishReason
                }
            }
            return (received, reason)
        }
        let (received, reason) = try await consumer.value
        // Tokens produced before the cancellation was seen may still be delivered; an uncancelled
        // generation would run on to the end of the 4096-token context.
        #expect(received < 1000, "generation went on after cancellation")
        #expect(reason == nil || reason == .cancelled)
        let again = try await collect(session.generate("Lily and Ben were", options: greedy(20)))
        let fresh = try await collect(ModelSession(model: model, contextLength: 4096, threads: 2).generate("Lily and Ben were", options: greedy(20)))
        #expect(again.ids == fresh.ids)
    }

    @Test("the same seed gives the same tokens whatever the thread count; another seed differs")
    func seededSampling() async throws {
        let model = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        let options = GenerationOptions(sampling: SamplingOptions(temperature: 1.0, topK: 0, topP: 1, minP: 0, seed: 42), maxTokens: 40)
        let one = try await collect(ModelSession(model: model, threads: 1).generate("Once upon a time", options: options))
        let two = try await collect(ModelSession(model: model, threads: 2).generate("Once upon a time", options: options))
        #expect(one.ids == two.ids)
        var other = options
        other.sampling.seed = 7
        #expect(try await collect(ModelSession(model: model, threads: 2).generate("Once upon a time", options: other)).ids != one.ids)
    }

    @Test("a stop string ends generation and is not emitted")
    func stopString() async throws {
        let model = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        let session = ModelSession(model: model, threads: 1)
        let full = try await collect(session.generate("Once upon a time", options: greedy(64)))
        let stop = " was"
        let prefix = try #require(full.text.range(of: stop)).lowerBound
        var options = greedy(64)
        options.stopStrings = [stop]
        let stopped = try await collect(session.generate("Once upon a time", options: options))
        #expect(stopped.text == String(full.text[..<prefix]))
        #expect(stopped.summary?.finishReason == .stop)
    }

    @Test("perplexity and next-token probabilities agree with the forward pass")
    func lookingInside() async throws {
        let model = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        let session = ModelSession(model: model, threads: 1)
        let reference = try ReferenceCase.load("stories260K")[0]
        let top = try await session.nextTokenLogProbabilities("Once upon a time", k: 5)
        #expect(top.count == 5 && top[0].id == reference.greedyIDs[0])
        #expect(top.map(\.logProbability) == top.map(\.logProbability).sorted(by: >))
        let (tokens, windows) = try TextScoring.windows(for: "Once upon a time", session: session, context: nil)
        let (estimate, logProbabilities) = try await TextScoring.perplexity(of: tokens, windows: windows, session: session)
        #expect(tokens == reference.promptIDs && logProbabilities.count == reference.promptIDs.count - 1)
        #expect(estimate.perplexity.value > 1 && estimate.perplexity.value.isFinite)
    }
}

@Suite("Sampling pieces")
struct SamplingPieceTests {
    @Test("the streaming detokenizer holds back split UTF-8 characters")
    func streamingUTF8() {
        var detokenizer = StreamingDetokenizer()
        let llama = Array("🦙".utf8)
        #expect(detokenizer.append([UInt8(ascii: "a")] + llama.prefix(2)) == "a")
        #expect(detokenizer.append(Array(llama[2...3])) == "🦙")
        #expect(detokenizer.append([0xE2]) == "")
        #expect(detokenizer.flush() == "\u{FFFD}")
    }

    @Test("the stop filter holds back possible prefixes and cuts at the stop string")
    func stopFilter() {
        var filter = StopStringFilter(stopStrings: ["END"])
        #expect(filter.append("abc E").text == "abc ")
        #expect(filter.append("N").text == "")
        #expect(filter.append("X") == ("ENX", false))
        #expect(filter.append("yyEND zzz") == ("yy", true))
    }

    @Test("argmax picks the lowest index on ties; greedy sampling is argmax, reported with the model's log-probability")
    func argmax() throws {
        #expect(GreedySampler.argmax([1, 3, 3, 2]) == 1)
        var steps = TokenSteps(pipeline: GenerationPipeline(), prompt: [], forcedTokens: [], trie: TokenTrie(pieces: [], endOfGeneration: []))
        let logits: [Float] = [0.5, 2, -1]
        let (token, logProbability) = try #require(logits.withUnsafeBufferPointer { steps.draw(from: $0) })
        #expect(token == 1)
        #expect(abs(logProbability - (2 - log(exp(0.5) + exp(2) + exp(-1)))) < 1e-5)
    }

    @Test("the penalties divide positive and multiply negative logits of the window's tokens, prompt included, then subtract frequency × count and presence")
    func tokenPenalties() {
        var penalty = TokenPenalties(repeat: 4, window: 2)
        penalty.start(prompt: [3, 0, 2])
        var logits: [Float] = [2, 1.5, -1, 8]
        logits.withUnsafeMutableBufferPointer { penalty.process($0) }
        #expect(logits == [0.5, 1.5, -4, 8])
        penalty.didAppend(1)
        logits = [2, 1.5, -1, 8]
        logits.withUnsafeMutableBufferPointer { penalty.process($0) }
        #expect(logits == [2, 0.375, -4, 8])

        // Window of 3 over [1, 1, 2, 1]: token 1 twice, token 2 once, the first 1 gone.
        var counted = TokenPenalties(repeat: 2, frequency: 0.5, presence: 0.25, window: 3)
        counted.start(prompt: [1, 1])
        counted.didAppend(2)
        counted.didAppend(1)
        logits = [1, 4, -2, 3]
        logits.withUnsafeMutableBufferPointer { counted.process($0) }
        let expected: [Float] = [1, 4 / 2 - 2 * 0.5 - 0.25, -2 * 2 - 0.5 - 0.25, 3]
        #expect(logits == expected)
        #expect(TokenPenalties(SamplingOptions(repeatPenalty: 1)) == nil)
        #expect(TokenPenalties(SamplingOptions(repeatPenalty: 1.1, repeatWindow: 0)) == nil)
        #expect(TokenPenalties(SamplingOptions(presencePenalty: 0.5)) != nil)
    }

    @Test("a logit bias adds to its tokens' logits, −∞ banning one, and skips ids outside the vocabulary")
    func logitBias() throws {
        var bias = LogitBias([0: 1.5, 2: -.infinity, 9: 3])
        var logits: [Float] = [1, 2, 3]
        logits.withUnsafeMutableBufferPointer { bias.process($0) }
        #expect(logits == [2.5, 2, -.infinity])
    }
}

@Suite("Sampler filters")
struct SamplerFilterTests {
    func draws(_ options: SamplingOptions, _ logits: [Float], count: Int = 400) -> Set<Int32> {
        var sampler = TemperatureSampler(options: options)
        return Set((0..<count).map { _ in logits.withUnsafeBufferPointer { sampler.sample($0) } })
    }

    @Test("top-k, top-p and min-p keep only the tokens they should")
    func filters() {
        let logits: [Float] = [0, 3, 1, 3, 2, -1]
        #expect(draws(SamplingOptions(temperature: 1, topK: 2, topP: 1, minP: 0, seed: 1), logits) == [1, 3])
        #expect(draws(SamplingOptions(temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1), logits).count == 6)
        #expect(draws(SamplingOptions(temperature: 1, topK: 0, topP: 0.5, minP: 0, seed: 1), logits) == [1, 3])
        #expect(draws(SamplingOptions(temperature: 1, topK: 0, topP: 0.3, minP: 0, seed: 1), logits) == [1])
        #expect(draws(SamplingOptions(temperature: 1, topK: 0, topP: 1, minP: 0.3, seed: 1), logits) == [1, 3, 4])
    }

    /// llama.cpp's chain written out plainly: every token sorted, probabilities over all of them,
    /// the top-p prefix, the min-p cut, a temperature draw.
    func plainDraw(_ logits: [Float], _ options: SamplingOptions, _ random: inout Xoshiro256) -> Int32 {
        let order = logits.indices.sorted { logits[$0] > logits[$1] || (logits[$0] == logits[$1] && $0 < $1) }
        let maximum = logits[order[0]]
        let total = logits.reduce(0.0) { $0 + Double(exp($1 - maximum)) }
        let probabilities = order.map { Double(exp(logits[$0] - maximum)) / total }
        var keep = order.count
        var cumulative = 0.0
        for (index, probability) in probabilities.enumerated() {
            cumulative += probability
            if cumulative >= Double(options.topP) { keep = index + 1; break }
        }
        keep = min(keep, max(1, probabilities.prefix(keep).firstIndex { $0 < probabilities[0] * Double(options.minP) } ?? keep))
        let weights = order.prefix(keep).map { exp((logits[$0] - maximum) / options.temperature) }
        var target = Float(random.nextUnitDouble()) * weights.reduce(0, +)
        for (candidate, weight) in zip(order, weights) {
            target -= weight
            if target <= 0 { return Int32(candidate) }
        }
        return Int32(order[keep - 1])
    }

    @Test("without top-k, only tokens min-p can keep are sorted, and the draws are the plain chain's")
    func minPPrunesWithoutChangingDraws() {
        var values = Xoshiro256(seed: 99)
        for trial in 0..<200 {
            let logits = (0..<3000).map { _ in Float(values.nextUnitDouble() * 12 - 6) }
            let options = SamplingOptions(temperature: 0.8, topK: 0, topP: trial % 2 == 0 ? 0.9 : 1, minP: 0.05, seed: UInt64(trial))
            var sampler = TemperatureSampler(options: options)
            var random = Xoshiro256(seed: UInt64(trial))
            for _ in 0..<3 {
                #expect(logits.withUnsafeBufferPointer { sampler.sample($0) } == plainDraw(logits, options, &random), "trial \(trial)")
            }
        }
    }
}
