import Foundation

/// Log-probabilities from logits, computed stably (the maximum subtracted, the sum in double
/// precision, as llama-perplexity does).
public enum LogSoftmax {
    /// log Σ exp(logits): subtracting it from a logit gives that token's log-probability.
    static func logNormalizer(_ logits: UnsafeBufferPointer<Float>) -> Float {
        let maximum = logits.max() ?? 0
        var total = 0.0
        for logit in logits { total += Double(exp(logit - maximum)) }
        return maximum + Float(log(total))
    }

    /// The `k` most likely tokens under `logits`, most likely first, with their log-probabilities.
    public static func top(_ logits: UnsafeBufferPointer<Float>, k: Int) -> [(id: Int32, logProbability: Float)] {
        let logTotal = logNormalizer(logits)
        return logits.indices.sorted { logits[$0] > logits[$1] }.prefix(max(0, k)).map { (Int32($0), logits[$0] - logTotal) }
    }

    /// The `k` most likely tokens under `logits`, most likely first, with their log-probabilities.
    public static func top(_ logits: [Float], k: Int) -> [(id: Int32, logProbability: Float)] {
        logits.withUnsafeBufferPointer { top($0, k: k) }
    }
}
