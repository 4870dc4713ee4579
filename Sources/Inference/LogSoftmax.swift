import Foundation

/// Log-probabilities from logits, computed stably (the maximum subtracted, the sum in double
/// precision, as llama-perplexity does).
enum LogSoftmax {
    /// log Σ exp(logits): subtracting it from a logit gives that token's log-probability.
    static func logNormalizer(_ logits: UnsafeBufferPointer<Float>) -> Float {
        let maximum = logits.max() ?? 0
        var total = 0.0
        for logit in logits { total += Double(exp(logit - maximum)) }
        return maximum + Float(log(total))
    }
}
