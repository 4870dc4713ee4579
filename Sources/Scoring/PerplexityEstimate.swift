import Foundation

/// Perplexity accumulated over scored tokens, with llama-perplexity's uncertainty: exp of the
/// mean negative log-likelihood, ± perplexity times the standard error of that mean.
public struct PerplexityEstimate: Sendable {
    /// The number of tokens scored so far.
    public private(set) var count = 0
    private var sum = 0.0
    private var sumOfSquares = 0.0

    /// An estimate over no tokens yet.
    public init() {}

    /// Adds tokens' log-probabilities.
    public mutating func add(_ logProbabilities: [Float]) {
        for logProbability in logProbabilities {
            let negative = -Double(logProbability)
            sum += negative
            sumOfSquares += negative * negative
        }
        count += logProbabilities.count
    }

    /// The perplexity so far and its uncertainty.
    public var perplexity: Estimate {
        guard count > 0 else { return Estimate(value: .nan, uncertainty: 0) }
        let mean = sum / Double(count)
        let variance = sumOfSquares / Double(count) - mean * mean
        let value = exp(mean)
        return Estimate(value: value, uncertainty: count > 1 && variance > 0 ? value * (variance / Double(count - 1)).squareRoot() : 0)
    }
}
