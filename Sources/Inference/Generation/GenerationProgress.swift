import GGUF
import GenerationTypes
import Tokenizers

/// One generation between forward passes: draws each token from its row of logits
/// (`TokenSteps`: processors, grammar, sampler, forced tokens), streams its text (`TextStream`:
/// detokenizer, stop strings), decides when it ends and keeps its summary. `ModelSession.run`
/// drives one alone; a session's batch drives one for each of its sequences.
struct GenerationProgress {
    /// What the generation has done so far; its finish reason once `advance` has returned nil.
    private(set) var summary: GenerationSummary
    private var steps: TokenSteps
    private var textStream: TextStream
    private let options: GenerationOptions
    private let tokenizer: Tokenizer
    /// The model file, for errors.
    private let file: String
    /// When the generation was asked for (its time to first token counts from then), and when
    /// its first token was drawn.
    private let asked: ContinuousClock.Instant
    private var firstTokenTime: ContinuousClock.Instant?

    /// A generation after `promptTokens` (of which `reused` came from the cache), asked for at
    /// `asked`, its prompt read from `readFrom` until now.
    init(promptTokens: [Int32], reused: Int, options: GenerationOptions, pipeline: GenerationPipeline, model: LanguageModel,
         asked: ContinuousClock.Instant, readFrom: ContinuousClock.Instant) {
        let promptDone = ContinuousClock.now
        summary = GenerationSummary(promptTokens: promptTokens.count, generatedTokens: 0, timeToFirstToken: 0,
                                    promptTokensPerSecond: Double(promptTokens.count - reused) / max(1e-9, (promptDone - readFrom).seconds),
                                    generationTokensPerSecond: 0, finishReason: .length)
        summary.reusedPromptTokens = reused
        steps = TokenSteps(pipeline: pipeline, prompt: promptTokens, forcedTokens: options.forcedTokens, trie: model.tokenTrie)
        textStream = TextStream(stopStrings: options.stopStrings)
        self.options = options
        tokenizer = model.tokenizer
        file = model.gguf.path
        self.asked = asked
    }

    /// Draws the next token from `logits` and hands it to `emit`; returns the token to run next,
    /// or nil when the generation has ended (`summary.finishReason` says why). `contextFull`: the
    /// cache has no room to run another token; `shouldStop` is asked before and after the draw.
    ///
    /// - Throws: `ModelError` when the grammar allows no token of the vocabulary.
    mutating func advance(logits: UnsafeBufferPointer<Float>, contextFull: Bool, shouldStop: () -> Bool,
                          emit: (GeneratedToken) -> Void) throws(ModelError) -> Int32? {
        guard summary.generatedTokens < options.maxTokens else { return nil }
        if shouldStop() {
            summary.finishReason = .cancelled
            return nil
        }
        let recorded = summary.generatedTokens < options.recordedLogits ? Array(logits) : nil
        guard let (token, logProbability) = steps.draw(from: logits) else {
            throw ModelError(file: file, field: "grammar",
                             reason: (steps.grammarOverrun.map { $0 + ", " } ?? "no token of the vocabulary can continue the output as the grammar requires, ")
                                + "after \(summary.generatedTokens) tokens")
        }
        summary.generatedTokens += 1
        if firstTokenTime == nil { firstTokenTime = .now }
        if let reason = steps.finishReason(at: token) {
            emit(GeneratedToken(id: token, text: textStream.finish().text, logProbability: logProbability, logits: recorded))
            summary.finishReason = reason
            return nil
        }
        var (text, stopped) = textStream.append(tokenizer.piece(token, showSpecial: options.shownTokens.contains(token)))
        let cancelled = shouldStop()
        // The token just sampled is the last one when the cache has no room to run it.
        let exhausted = summary.generatedTokens >= options.maxTokens || contextFull || steps.outputComplete
        if !stopped && (cancelled || exhausted) {
            let (tail, stoppedInTail) = textStream.finish()
            text += tail
            stopped = stoppedInTail
        }
        emit(GeneratedToken(id: token, text: text, logProbability: logProbability, logits: recorded))
        if stopped || cancelled || exhausted {
            summary.finishReason = stopped ? .stop : cancelled ? .cancelled : steps.outputComplete ? .eos : contextFull ? .context : .length
            return nil
        }
        return steps.next(after: token)
    }

    /// The summary of a generation cancelled before its prompt was read.
    static func cancelled(promptTokens: Int) -> GenerationSummary {
        GenerationSummary(promptTokens: promptTokens, generatedTokens: 0, timeToFirstToken: 0, promptTokensPerSecond: 0,
                          generationTokensPerSecond: 0, finishReason: .cancelled)
    }

    /// Ends the generation as cancelled before its next token.
    mutating func cancel() {
        summary.finishReason = .cancelled
    }

    /// The summary with its timings, taken now.
    func finished() -> GenerationSummary {
        var summary = summary
        let finished = ContinuousClock.now
        let first = firstTokenTime ?? finished
        summary.timeToFirstToken = (first - asked).seconds
        if summary.generatedTokens > 1 {
            summary.generationTokensPerSecond = Double(summary.generatedTokens - 1) / max(1e-9, (finished - first).seconds)
        }
        return summary
    }
}
