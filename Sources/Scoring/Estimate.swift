import Foundation

/// A value with its standard error, as llama-perplexity reports its statistics ("x ± u").
public struct Estimate: Sendable, Equatable {
    /// The value.
    public let value: Double
    /// Its standard error (0 when there are too few samples to say, as in llama-perplexity).
    public let uncertainty: Double

    /// A value and its uncertainty.
    public init(value: Double, uncertainty: Double) {
        self.value = value
        self.uncertainty = uncertainty
    }

    /// The mean of `count` samples from their sum and sum of squares, with the standard error of
    /// the mean; llama-perplexity's `mean_and_uncertainty` (no uncertainty for 10 samples or fewer).
    init(sum: Double, sumOfSquares: Double, count: Int) {
        guard count > 0 else {
            self.init(value: 0, uncertainty: 0)
            return
        }
        let mean = sum / Double(count)
        let variance = sumOfSquares / Double(count) - mean * mean
        self.init(value: mean, uncertainty: variance > 0 && count > 10 ? (variance / Double(count - 1)).squareRoot() : 0)
    }
}
