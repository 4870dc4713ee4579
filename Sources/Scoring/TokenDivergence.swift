import Foundation
import Inference

/// How a model's prediction of one token differs from a base model's, as llama-perplexity's
/// `--kl-divergence` measures it.
public struct TokenDivergence: Sendable, Equatable {
    /// KL(base ‖ model) over the whole vocabulary, in nats.
    public let klDivergence: Double
    /// The model's probability of the actual token minus the base's.
    public let probabilityDifference: Double
    /// The model's negative log-probability of the actual token.
    public let negativeLogLikelihood: Double
    /// The base's negative log-probability of the actual token.
    public let baseNegativeLogLikelihood: Double
    /// Whether both models put the same token first.
    public let sameTop: Bool

    /// Compares the model's `logits` for one position with the base's log-probabilities there;
    /// `target` is the token that actually follows.
    public init(baseLogProbabilities base: ArraySlice<Float>, logits: UnsafeBufferPointer<Float>, target: Int) {
        let logTotal = LogSoftmax.logNormalizer(logits)
        var divergence = 0.0
        var baseTop = 0, top = 0
        for (index, baseLog) in zip(logits.indices, base) {
            divergence += Double(exp(baseLog)) * Double(baseLog - (logits[index] - logTotal))
            if baseLog > base[base.startIndex + baseTop] { baseTop = index }
            if logits[index] > logits[top] { top = index }
        }
        let baseTarget = base[base.startIndex + target]
        klDivergence = divergence
        negativeLogLikelihood = Double(logTotal - logits[target])
        baseNegativeLogLikelihood = Double(-baseTarget)
        probabilityDifference = exp(-negativeLogLikelihood) - exp(Double(baseTarget))
        sameTop = top == baseTop
    }
}
