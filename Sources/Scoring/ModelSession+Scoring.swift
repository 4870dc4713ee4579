import GGUF
import Inference

/// Scoring text: what the model predicts at each position of a window, for perplexity and for
/// comparing two models' distributions.
extension ModelSession {
    /// Scores one window of `tokens` (see `ScoringWindows`) from an empty cache: each scored
    /// target's log-probability and, with `keepingDistributions`, each scored position's whole
    /// distribution.
    public func scores(of tokens: [Int32], window: ScoringWindows.Window, startsWithBOS: Bool,
                       keepingDistributions: Bool = false) throws(ModelError) -> WindowScores {
        let vocabulary = model.configuration.vocabularySize
        var logProbabilities: [Float] = []
        var distributions: [Float] = []
        if keepingDistributions { distributions.reserveCapacity(window.scoredCount * vocabulary) }
        let targets = try evaluate(tokens, window: window, startsWithBOS: startsWithBOS) { logits, target in
            let logTotal = LogSoftmax.logNormalizer(logits)
            logProbabilities.append(logits[target] - logTotal)
            if keepingDistributions { distributions.append(contentsOf: logits.lazy.map { $0 - logTotal }) }
        }
        return WindowScores(targets: targets, logProbabilities: logProbabilities,
                            distributions: keepingDistributions ? distributions : nil, vocabularySize: vocabulary)
    }

    /// Compares this model's predictions over one window with a base model's `base` scores of the
    /// same window (which must hold its distributions), token by token.
    public func divergences(of tokens: [Int32], window: ScoringWindows.Window, startsWithBOS: Bool,
                            from base: WindowScores) throws(ModelError) -> [TokenDivergence] {
        let vocabulary = model.configuration.vocabularySize
        guard base.distributions != nil, base.vocabularySize == vocabulary else {
            throw ModelError(file: model.gguf.path, field: "vocabulary",
                             reason: "has \(vocabulary) tokens, the base model \(base.vocabularySize): only models with one vocabulary can be compared")
        }
        var divergences: [TokenDivergence] = []
        var index = 0
        _ = try evaluate(tokens, window: window, startsWithBOS: startsWithBOS) { logits, target in
            if let distribution = base.distribution(index) {
                divergences.append(TokenDivergence(baseLogProbabilities: distribution, logits: logits, target: target))
            }
            index += 1
        }
        return divergences
    }

    /// Runs `window` of `tokens` through the model from an empty cache (its first token the BOS
    /// when `startsWithBOS`) and calls `body` with the logits of each scored position and the
    /// token that follows it. Returns the scored targets.
    private func evaluate(_ tokens: [Int32], window: ScoringWindows.Window, startsWithBOS: Bool,
                          _ body: (UnsafeBufferPointer<Float>, Int) -> Void) throws(ModelError) -> [Int32] {
        guard window.start >= 0, window.count >= 2, window.start + window.count <= tokens.count else {
            throw ModelError(file: model.gguf.path, field: "window", reason: "tokens \(window.start)..<\(window.start + window.count) are not all in the text's \(tokens.count)")
        }
        var windowTokens = Array(tokens[window.start..<(window.start + window.count)])
        if startsWithBOS, let bos = model.tokenizer.vocabulary.bos { windowTokens[0] = bos }
        try predictions(over: windowTokens, observingFrom: window.firstScored, body)
        return Array(windowTokens[(window.firstScored + 1)...])
    }
}
