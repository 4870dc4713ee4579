import ChatTemplates
import Foundation
import GGUF
import GenerationTypes
import Grammars
import Inference
import Logging
import OpenAIAPI
import RunRecords
import Scoring

/// One generation the server runs for a request: it waits for a session of the model's pool
/// (within the server's queue limits), generates, and hands out the answer whole or chunk by
/// chunk. When the consumer stops reading or the task is cancelled (the client went away, or the
/// shutdown's grace period ended), the session stops within one token and the run is recorded
/// as interrupted; a request cancelled while it waits leaves the queue without running.
struct GenerationJob: Sendable {
    let model: ServedModel
    /// The prompt, and how the answer's reasoning and tool calls are told from its reply.
    let prompt: ServedPrompt
    let options: GenerationOptions
    /// The request's own steering (`control_vectors`, `features`), applied to its sequence alone,
    /// after the model's hooks.
    let hooks: [any ForwardHook]
    /// The LoRA adapters its sequence applies (`lora`, or the server's scales).
    let adapters: AdapterSet
    /// What the run log keeps of its steering: the control vectors (every request's and its own)
    /// and the features it set.
    let steering: RunSteering?
    let interventions: [RunIntervention]
    /// How many choices (`n`): each generated in turn on the leased session, choice i with the
    /// options' seed + i (the later choices reuse the prompt's whole batches from the cache).
    let choices: Int
    /// The options' output constraint compiled, and the request field that asked for it.
    let grammar: (grammar: Grammar, field: String)?
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
    let loggedPrompt: String
    let messages: [ChatMessage]?
    /// Receives the finished (or abandoned) generation.
    let record: (@Sendable (ServedGeneration) -> Void)?
    /// How long and behind how many others it may wait for a session.
    let limits: ServerLimits
    /// Tells a shutdown from a client that went away.
    let shutdown: ServerShutdown
    /// Where its tokens and timings are counted.
    let metrics: ServedModelMetrics
    /// When the request arrived: its time to first token counts from then.
    let arrived: ContinuousClock.Instant

    /// Streams the answer as JSON chunks to `send`, the choices one after another; a failing
    /// `send` (a closed connection) stops the generation.
    func stream<R: ServedGenerationRequest>(_ type: R.Type, on lease: SessionLease, includeUsage: Bool, send: (String) async throws -> Void) async throws {
        let encoder = JSONEncoder()
        func emit(_ answer: R.Answer) async throws {
            try await send(String(decoding: try encoder.encode(answer), as: UTF8.self))
        }
        var generated = 0
        for choice in 0..<choices {
            var first = true
            var split = prompt.replyStream()
            var calls = prompt.toolCallStream()
            var callCount = 0
            func emitChunk(text: String, reasoning: String, toolCalls: [ToolCall], logprobs: [TokenLogprob]?, finishReason: String?) async throws {
                try await emit(R.answer(id: id, created: created, model: model.name, index: choice, chunk: true, first: first, text: text,
                                        reasoning: reasoning.isEmpty ? nil : reasoning, toolCalls: toolCalls, firstCall: callCount, logprobs: logprobs,
                                        finishReason: finishReason, usage: nil))
                first = false
                callCount += toolCalls.count
            }
            let summary = try await run(choice, on: lease) { token in
                let entries = wantsLogprobs ? [logprob(token)] : nil
                // What the token adds to the reasoning, to the reply's text and to its tool calls.
                let (reasoning, reply) = split.append(token.text)
                let (text, toolCalls) = calls.append(reply)
                guard !text.isEmpty || !reasoning.isEmpty || !toolCalls.isEmpty || entries != nil else { return }
                try await emitChunk(text: text, reasoning: reasoning, toolCalls: toolCalls, logprobs: entries, finishReason: nil)
            }
            let (text, toolCalls) = calls.finish()
            if !text.isEmpty || !toolCalls.isEmpty {
                try await emitChunk(text: text, reasoning: "", toolCalls: toolCalls, logprobs: nil, finishReason: nil)
            }
            try await emitChunk(text: "", reasoning: "", toolCalls: [], logprobs: nil, finishReason: finishReason(summary, calls: callCount))
            generated += summary.generatedTokens
        }
        if includeUsage {
            try await emit(R.usageChunk(id: id, created: created, model: model.name,
                                        usage: Usage(promptTokens: prompt.tokens.count, completionTokens: generated)))
        }
    }

    /// The whole answer, its choices in order.
    func whole<R: ServedGenerationRequest>(_ type: R.Type, on lease: SessionLease) async throws -> R.Answer {
        let echoed: [TokenLogprob] = echo && wantsLogprobs ? try await promptLogprobs(on: lease) : []
        var answers: [R.Answer] = []
        var generated = 0
        for choice in 0..<choices {
            var text = echo ? loggedPrompt : ""
            var entries = echoed
            let summary = try await run(choice, on: lease) { token in
                text += token.text
                if wantsLogprobs { entries.append(logprob(token)) }
            }
            let reply = prompt.replyStream().reply(to: text)
            var calls = prompt.toolCallStream()
            let (content, toolCalls) = calls.whole(reply.content)
            answers.append(R.answer(id: id, created: created, model: model.name, index: choice, chunk: false, first: true, text: content,
                                    reasoning: reply.reasoning.flatMap { $0.isEmpty ? nil : $0 }, toolCalls: toolCalls, firstCall: 0,
                                    logprobs: wantsLogprobs ? entries : nil, finishReason: finishReason(summary, calls: toolCalls.count), usage: nil))
            generated += summary.generatedTokens
        }
        let usage = Usage(promptTokens: prompt.tokens.count, completionTokens: generated)
        guard let joined = R.Answer.joining(answers, usage: usage) else { throw ServerError.failed("no choices were generated") }
        return joined
    }

    /// The finish reason an answer reports: `tool_calls` when a reply that ended by itself called
    /// tools (as OpenAI's API), else the generation's.
    private func finishReason(_ summary: GenerationSummary, calls: Int) -> String {
        calls > 0 && summary.finishReason.apiName == "stop" ? "tool_calls" : summary.finishReason.apiName
    }

    /// Generates on the leased session, handing each token to `consume`. Each request is logged
    /// at level info when it starts and when it ends: its id, session, tokens and how it ended (a
    /// run cut short shows as `disconnected`, and why). A run cut short is recorded as
    /// interrupted; one the model failed is not recorded (the server logs the error).
    private func run(_ choice: Int, on lease: SessionLease, _ consume: (GeneratedToken) async throws -> Void) async throws -> GenerationSummary {
        let index = lease.index
        // Choice i's seed is the request's + i; its log lines name it when there are several.
        var options = options
        options.sampling.seed &+= UInt64(choice)
        let id = choices == 1 ? id : "\(id) choice \(choice)"
        logger.info("\(id) session \(index): started, \(prompt.tokens.count) prompt tokens")
        if choice == 0 { metrics.countPrompt(tokens: prompt.tokens.count) }
        var collected = GenerationCollector()
        let started = ContinuousClock.now
        // The request's first token is timed from its arrival; each later one of a choice from the one before.
        var previous: ContinuousClock.Instant?
        var failure: (any Error)?
        do {
            for try await event in model.container.generate(tokens: prompt.tokens, on: lease, options: options, hooks: hooks, grammar: grammar?.grammar,
                                                                     adapters: adapters) {
                collected.add(event)
                if case .token(let token) = event {
                    let now = ContinuousClock.now
                    metrics.countToken(sinceArrival: previous == nil && choice == 0 ? now - arrived : nil, sincePrevious: previous.map { now - $0 })
                    previous = now
                    do {
                        try await consume(token)
                    } catch {
                        failure = error
                        break
                    }
                }
            }
        } catch is CancellationError {
            // Cut short below; any other error is the model's, answered 500 and not recorded.
        } catch let error as ModelError where error.field == "grammar" {
            // The request's grammar led where no token can follow, or grew past its limits.
            throw ServerError.invalid("\(grammar?.field ?? "grammar"): \(error.reason)", param: grammar?.field)
        }
        let tokens = collected.tokens
        guard let summary = collected.summary, failure == nil else {
            // Cut short: the consumer failed (a closed connection) or the task was cancelled.
            logger.info("\(id) session \(index): disconnected after \(tokens.count) tokens (\(shutdown.interruption))")
            metrics.countFinished(reason: FinishReason.cancelled.rawValue)
            let seconds = (ContinuousClock.now - started).seconds
            record?(ServedGeneration(model: model, prompt: loggedPrompt, messages: messages, tokens: tokens,
                                     summary: GenerationSummary(promptTokens: prompt.tokens.count, generatedTokens: tokens.count, timeToFirstToken: 0,
                                                                promptTokensPerSecond: 0, generationTokensPerSecond: seconds > 0 ? Double(tokens.count) / seconds : 0,
                                                                finishReason: .cancelled),
                                     options: options, steering: steering, interventions: interventions, disconnected: true))
            throw failure ?? CancellationError()
        }
        logger.info("\(id) session \(index): \(prompt.tokens.count) prompt tokens, \(summary.generatedTokens) generated, \(summary.finishReason.rawValue)")
        metrics.countFinished(reason: summary.finishReason.rawValue)
        record?(ServedGeneration(model: model, prompt: loggedPrompt, messages: messages, tokens: tokens, summary: summary, options: options,
                                 steering: steering, interventions: interventions, disconnected: false))
        return summary
    }

    /// A session of the pool, waiting within the server's limits; a request cancelled while it
    /// waits (its client went away) leaves the queue, logged.
    func lease() async throws -> SessionLease {
        try await model.lease(limits: limits, logger: logger, id: id, shutdown: shutdown)
    }

    /// The prompt's tokens with their log-probabilities, scored on the leased session (the first
    /// has none: NaN).
    private func promptLogprobs(on lease: SessionLease) async throws -> [TokenLogprob] {
        var logProbabilities: [Float] = []
        if prompt.tokens.count >= 2 {
            let windows = try ScoringWindows.whole(tokenCount: prompt.tokens.count)
            logProbabilities = try await lease.session.scores(of: prompt.tokens, window: windows.windows[0], startsWithBOS: false).logProbabilities
        }
        let tokenizer = model.model.tokenizer
        return prompt.tokens.enumerated().map { position, id in
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
