import Foundation
import Inference
import Logging
import OpenAIAPI

/// One generation the server runs for a request: it waits for a session of the model's pool,
/// generates, and hands out the answer whole or chunk by chunk. When the consumer stops reading
/// (the client went away), the stream is dropped and the session stops within one token.
struct GenerationJob: Sendable {
    let model: ServedModel
    let promptTokens: [Int32]
    let options: GenerationOptions
    /// Alternatives per token to report.
    let alternatives: Int
    /// Whether log-probabilities were asked for.
    let wantsLogprobs: Bool
    /// Whether the answer starts with the prompt, its tokens scored when log-probabilities are asked for.
    let echo: Bool
    let id: String
    let created: Int
    let logger: Logger
    /// The prompt and messages, for the record.
    let prompt: String
    let messages: [ChatMessage]?
    /// Receives the finished (or abandoned) generation.
    let record: (@Sendable (ServedGeneration) -> Void)?

    /// Streams the answer as JSON chunks to `send`; a failing `send` (a closed connection) stops
    /// the generation.
    func stream<R: ServedGenerationRequest>(_ type: R.Type, includeUsage: Bool, send: (String) async throws -> Void) async throws {
        let encoder = JSONEncoder()
        func emit(_ answer: R.Answer) async throws {
            try await send(String(decoding: try encoder.encode(answer), as: UTF8.self))
        }
        var first = true
        let summary = try await run { token in
            let entries = wantsLogprobs ? [logprob(token)] : nil
            guard !token.text.isEmpty || entries != nil else { return }
            try await emit(R.answer(id: id, created: created, model: model.name, chunk: true, first: first, text: token.text, logprobs: entries,
                                    finishReason: nil, usage: nil))
            first = false
        }
        try await emit(R.answer(id: id, created: created, model: model.name, chunk: true, first: first, text: "", logprobs: nil,
                                finishReason: summary.finishReason.apiName, usage: nil))
        if includeUsage {
            try await emit(R.usageChunk(id: id, created: created, model: model.name,
                                        usage: Usage(promptTokens: promptTokens.count, completionTokens: summary.generatedTokens)))
        }
    }

    /// The whole answer.
    func whole<R: ServedGenerationRequest>(_ type: R.Type) async throws -> R.Answer {
        var text = echo ? prompt : ""
        var entries: [TokenLogprob] = echo && wantsLogprobs ? try await promptLogprobs() : []
        let summary = try await run { token in
            text += token.text
            if wantsLogprobs { entries.append(logprob(token)) }
        }
        return R.answer(id: id, created: created, model: model.name, chunk: false, first: true, text: text, logprobs: wantsLogprobs ? entries : nil,
                        finishReason: summary.finishReason.apiName, usage: Usage(promptTokens: promptTokens.count, completionTokens: summary.generatedTokens))
    }

    /// Generates on a session of the pool, handing each token to `consume`.
    /// Each request is logged at level info when it ends: its id, session, tokens and how it
    /// ended (a client that went away shows as `disconnected`).
    private func run(_ consume: (GeneratedToken) async throws -> Void) async throws -> GenerationSummary {
        let index = try await model.pool.acquire()
        defer { model.pool.release(index) }
        var collected = GenerationCollector()
        let started = ContinuousClock.now
        do {
            for try await event in model.sessions[index].generate(tokens: promptTokens, options: options) {
                collected.add(event)
                if case .token(let token) = event { try await consume(token) }
            }
        } catch {
            let tokens = collected.tokens
            logger.info("\(id) session \(index): disconnected after \(tokens.count) tokens (\(error))")
            let elapsed = (ContinuousClock.now - started).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
            record?(ServedGeneration(model: model, prompt: prompt, messages: messages, tokens: tokens,
                                     summary: GenerationSummary(promptTokens: promptTokens.count, generatedTokens: tokens.count, timeToFirstToken: 0,
                                                                promptTokensPerSecond: 0, generationTokensPerSecond: seconds > 0 ? Double(tokens.count) / seconds : 0,
                                                                finishReason: .cancelled),
                                     options: options, disconnected: true))
            throw error
        }
        let tokens = collected.tokens
        guard let summary = collected.summary else { throw CancellationError() }
        logger.info("\(id) session \(index): \(promptTokens.count) prompt tokens, \(summary.generatedTokens) generated, \(summary.finishReason.rawValue)")
        record?(ServedGeneration(model: model, prompt: prompt, messages: messages, tokens: tokens, summary: summary, options: options, disconnected: false))
        return summary
    }

    /// The prompt's tokens with their log-probabilities, scored on a session of the pool (the
    /// first has none: NaN).
    private func promptLogprobs() async throws -> [TokenLogprob] {
        let index = try await model.pool.acquire()
        defer { model.pool.release(index) }
        var logProbabilities: [Float] = []
        if promptTokens.count >= 2 {
            let windows = try ScoringWindows.whole(tokenCount: promptTokens.count)
            logProbabilities = try await model.sessions[index].scores(of: promptTokens, window: windows.windows[0], startsWithBOS: false).logProbabilities
        }
        let tokenizer = model.model.tokenizer
        return promptTokens.enumerated().map { position, id in
            let bytes = tokenizer.piece(id)
            return TokenLogprob(token: String(decoding: bytes, as: UTF8.self), logprob: position == 0 ? .nan : Double(logProbabilities[position - 1]),
                                bytes: bytes.map(Int.init), topLogprobs: [])
        }
    }

    /// The token's entry in the answer's log-probabilities: its piece, log-probability, and the
    /// most likely alternatives at its position.
    private func logprob(_ token: GeneratedToken) -> TokenLogprob {
        let tokenizer = model.model.tokenizer
        func entry(_ id: Int32) -> (text: String, bytes: [Int]) {
            let bytes = tokenizer.piece(id)
            return (String(decoding: bytes, as: UTF8.self), bytes.map(Int.init))
        }
        let (text, bytes) = entry(token.id)
        let top = (token.logits.map { LogSoftmax.top($0, k: alternatives) } ?? []).map { alternative in
            let (text, bytes) = entry(alternative.id)
            return TopLogprob(token: text, logprob: Double(alternative.logProbability), bytes: bytes)
        }
        return TokenLogprob(token: text, logprob: Double(token.logProbability), bytes: bytes, topLogprobs: top)
    }

}
