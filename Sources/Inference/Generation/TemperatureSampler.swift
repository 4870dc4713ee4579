import CPUBackend
import Foundation
import GenerationTypes

/// llama.cpp's default sampler chain after the penalties: top-k, top-p and min-p filtering,
/// then temperature and a seeded draw. Greedy when the temperature is 0.
public struct TemperatureSampler: TokenSampler {
    /// The temperature, filters and seed (its penalties are `TokenPenalties`, its logit bias a `LogitBias`).
    public let options: SamplingOptions
    private var random: Xoshiro256
    /// Candidate indices, reused from token to token.
    private var candidates: [Int] = []

    /// A sampler with `options`' temperature, filters and seed.
    public init(options: SamplingOptions) {
        self.options = options
        random = Xoshiro256(seed: options.seed)
    }

    public mutating func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32 {
        options.temperature <= 0 ? GreedySampler.argmax(logits) : draw(logits)
    }

    public var candidateLimit: Int? { options.temperature <= 0 ? 1 : options.topK > 0 ? options.topK : nil }

    private mutating func draw(_ logits: UnsafeBufferPointer<Float>) -> Int32 {
        let pruned = selectCandidates(logits)
        let maximum = logits[candidates[0]]
        var probabilities = candidates.map { exp(logits[$0] - maximum) }
        // Without top-k the probabilities are over the whole vocabulary, pruned candidates too.
        let total = pruned ? exp(LogSoftmax.logNormalizer(logits) - maximum) : probabilities.reduce(0, +)
        probabilities = probabilities.map { $0 / total }
        var keep = candidates.count
        if options.topP < 1 {
            var cumulative: Float = 0
            for (index, probability) in probabilities.enumerated() {
                cumulative += probability
                if cumulative >= options.topP {
                    keep = index + 1
                    break
                }
            }
        }
        if options.minP > 0 {
            let threshold = probabilities[0] * options.minP
            keep = min(keep, max(1, probabilities.prefix(keep).firstIndex { $0 < threshold } ?? keep))
        }
        let weights = candidates.prefix(keep).map { exp((logits[$0] - maximum) / options.temperature) }
        var target = Float(random.nextUnitDouble()) * weights.reduce(0, +)
        for (candidate, weight) in zip(candidates, weights) {
            target -= weight
            if target <= 0 { return Int32(candidate) }
        }
        return Int32(candidates[keep - 1])
    }

    /// Fills `candidates` with the `topK` best indices, best first, lower index first on ties.
    /// With top-k this is one pass with a small sorted buffer, not a sort. Without, every token is
    /// a candidate, but only those min-p can keep (a logit at least log(min-p) below the best,
    /// with room for rounding) are sorted: the rest are never drawn, and their probabilities
    /// still count in the total; returns whether candidates were left out so.
    private mutating func selectCandidates(_ logits: UnsafeBufferPointer<Float>) -> Bool {
        candidates.removeAll(keepingCapacity: true)
        func better(_ left: Int, _ right: Int) -> Bool {
            logits[left] > logits[right] || (logits[left] == logits[right] && left < right)
        }
        guard options.topK > 0, options.topK < logits.count else {
            let best = logits.max() ?? 0
            let floor = options.minP > 0 && best.isFinite ? best + log(options.minP) - 1e-3 : -Float.infinity
            if floor > -.infinity {
                for index in logits.indices where logits[index] >= floor { candidates.append(index) }
            } else {
                candidates.append(contentsOf: logits.indices)
            }
            candidates.sort(by: better)
            return candidates.count < logits.count
        }
        for index in logits.indices {
            if candidates.count == options.topK {
                guard let last = candidates.last, better(index, last) else { continue }
                candidates.removeLast()
            }
            let position = candidates.firstIndex { better(index, $0) } ?? candidates.count
            candidates.insert(index, at: position)
        }
        return false
    }
}
