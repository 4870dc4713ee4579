import CPUBackend

/// Log-probabilities from logits, computed stably (the maximum subtracted, the sum in double
/// precision, as llama-perplexity does).
public enum LogSoftmax {
    /// log Σ exp(logits): subtracting it from a logit gives that token's log-probability (a C
    /// kernel: it runs over the whole vocabulary for every generated token).
    public static func logNormalizer(_ logits: UnsafeBufferPointer<Float>) -> Float {
        guard let base = logits.baseAddress, !logits.isEmpty else { return 0 }
        return Operations.logSumExp(base, count: logits.count)
    }

    /// The `k` most likely tokens under `logits`, most likely first (the lower id first on a
    /// tie), with their log-probabilities. One pass keeping the best `k` in order, not a sort of
    /// the whole vocabulary: it runs for every generated token a server reports alternatives for.
    public static func top(_ logits: UnsafeBufferPointer<Float>, k: Int) -> [(id: Int32, logProbability: Float)] {
        let best = highest(logits, count: k)
        guard !best.isEmpty else { return [] }
        let logTotal = logNormalizer(logits)
        return best.map { ($0, logits[Int($0)] - logTotal) }
    }

    /// The indices of the `count` highest logits, highest first, the lower index first on a tie.
    /// One pass keeping the best in order, not a sort of the whole vocabulary.
    public static func highest(_ logits: UnsafeBufferPointer<Float>, count: Int) -> [Int32] {
        let count = min(max(0, count), logits.count)
        guard count > 0 else { return [] }
        var best: [Int32] = []
        best.reserveCapacity(count + 1)
        for index in logits.indices {
            let logit = logits[index]
            if best.count == count, logit <= logits[Int(best[count - 1])] { continue }
            var position = best.count
            while position > 0, logits[Int(best[position - 1])] < logit { position -= 1 }
            best.insert(Int32(index), at: position)
            if best.count > count { best.removeLast() }
        }
        return best
    }

    /// The `k` most likely tokens under `logits`, most likely first, with their log-probabilities.
    public static func top(_ logits: [Float], k: Int) -> [(id: Int32, logProbability: Float)] {
        logits.withUnsafeBufferPointer { top($0, k: k) }
    }
}
