import Foundation
import GenerationTypes

/// llama.cpp's default sampler chain after the penalties: top-k, top-p and min-p filtering,
/// then temperature and a seeded draw. Greedy when the temperature is 0.
public struct TemperatureSampler: TokenSampler {
    /// The temperature, filters and seed (its repetition penalty is a `RepetitionPenalty`).
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
        selectCandidates(logits)
        let maximum = logits[candidates[0]]
        var probabilities = candidates.map { exp(logits[$0] - maximum) }
        let total = probabilities.reduce(0, +)
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

    /// Fills `candidates` with the `topK` best indices (all, without top-k), best first, lower
    /// index first on ties. With top-k this is one pass with a small sorted buffer, not a sort.
    private mutating func selectCandidates(_ logits: UnsafeBufferPointer<Float>) {
        candidates.removeAll(keepingCapacity: true)
        func better(_ left: Int, _ right: Int) -> Bool {
            logits[left] > logits[right] || (logits[left] == logits[right] && left < right)
        }
        guard options.topK > 0, options.topK < logits.count else {
            candidates.append(contentsOf: logits.indices)
            candidates.sort(by: better)
            return
        }
        for index in logits.indices {
            if candidates.count == options.topK {
                guard let last = candidates.last, better(index, last) else { continue }
                candidates.removeLast()
            }
            let position = candidates.firstIndex { better(index, $0) } ?? candidates.count
            candidates.insert(index, at: position)
        }
    }
}
