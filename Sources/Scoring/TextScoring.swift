import GGUF
import Inference

/// Scores a text window by window (see `ScoringWindows`): one model's perplexity, or a model's
/// token-by-token divergence from a base model. Each window runs on its session's own thread;
/// cancelling the calling task stops the work at the next batch.
public enum TextScoring {
    /// The perplexity of `session`'s model over `windows` of `tokens`, and every scored token's
    /// log-probability. `progress` is told the number of windows done and the estimate so far.
    public static func perplexity(of tokens: [Int32], windows: ScoringWindows, session: ModelSession,
                                  progress: (Int, Estimate) -> Void = { _, _ in }) async throws(ModelError) -> (estimate: PerplexityEstimate, logProbabilities: [Float]) {
        var estimate = PerplexityEstimate()
        var logProbabilities: [Float] = []
        for (index, window) in windows.windows.enumerated() {
            let scores = try await session.scores(of: tokens, window: window, startsWithBOS: windows.startsWithBOS)
            estimate.add(scores.logProbabilities)
            logProbabilities += scores.logProbabilities
            progress(index + 1, estimate.perplexity)
        }
        return (estimate, logProbabilities)
    }

    /// How `model`'s predictions over `windows` of `tokens` diverge from `base`'s, token by
    /// token. Both models must tokenize the text into the same `tokens`. `progress` is told the
    /// number of windows done.
    public static func divergences(of tokens: [Int32], windows: ScoringWindows, base: ModelSession, model: ModelSession,
                                   progress: (Int) -> Void = { _ in }) async throws(ModelError) -> [TokenDivergence] {
        var divergences: [TokenDivergence] = []
        for (index, window) in windows.windows.enumerated() {
            let baseScores = try await base.scores(of: tokens, window: window, startsWithBOS: windows.startsWithBOS, keepingDistributions: true)
            divergences += try await model.divergences(of: tokens, window: window, startsWithBOS: windows.startsWithBOS, from: baseScores)
            progress(index + 1)
        }
        return divergences
    }

    /// The windows to score `text` with `session`'s model: llama-perplexity's chunks of
    /// `context` tokens when given, else the whole text as one window. Returns the tokens too.
    /// Perplexity and comparisons, in cells and on the command line, all take their windows here,
    /// so they accept and refuse the same texts.
    public static func windows(for text: String, session: ModelSession, context: Int?) throws(ScoringError) -> (tokens: [Int32], windows: ScoringWindows) {
        let tokens = session.tokenize(text)
        if let context {
            return (tokens, try .chunks(tokenCount: tokens.count, context: context, startsWithBOS: session.model.tokenizer.vocabulary.addsBOS))
        }
        return (tokens, try .whole(tokenCount: tokens.count))
    }

    /// The windows to compare `model` with `base` over `text`, as `windows(for:session:context:)`
    /// gives them; both models must tokenize the text alike (formats of one model do).
    public static func windows(for text: String, base: ModelSession, model: ModelSession, context: Int?) throws(ScoringError) -> (tokens: [Int32], windows: ScoringWindows) {
        let scored = try windows(for: text, session: base, context: context)
        guard model.tokenize(text) == scored.tokens else {
            throw ScoringError(reason: "\(model.model.gguf.path) tokenizes the text differently from \(base.model.gguf.path): only formats of one model can be compared")
        }
        return scored
    }
}
