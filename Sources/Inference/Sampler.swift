import Foundation

/// Picks tokens from logits: repetition penalty, then top-k, top-p and min-p filtering, then
/// temperature and a seeded draw (llama.cpp's order). Greedy when the temperature is 0.
struct Sampler {
    let options: SamplingOptions
    private var random: Xoshiro256
    /// Logits after the repetition penalty, reused from token to token.
    private var adjusted: [Float] = []
    /// Candidate indices, reused from token to token.
    private var candidates: [Int] = []

    init(options: SamplingOptions) {
        self.options = options
        random = Xoshiro256(seed: options.seed)
    }

    /// The chosen token and its log-probability under the model (the raw logits' softmax).
    mutating func sample(_ logits: UnsafeBufferPointer<Float>, recent: ArraySlice<Int32>) -> (token: Int32, logProbability: Float) {
        let token: Int32
        if options.repeatPenalty != 1 {
            adjusted.removeAll(keepingCapacity: true)
            adjusted.append(contentsOf: logits)
            for recentToken in Set(recent.suffix(options.repeatWindow)) where Int(recentToken) < adjusted.count {
                let value = adjusted[Int(recentToken)]
                adjusted[Int(recentToken)] = value > 0 ? value / options.repeatPenalty : value * options.repeatPenalty
            }
            let penalized = adjusted
            token = penalized.withUnsafeBufferPointer { choose(from: $0) }
        } else {
            token = choose(from: logits)
        }
        return (token, logits[Int(token)] - LogSoftmax.logNormalizer(logits))
    }

    private mutating func choose(from logits: UnsafeBufferPointer<Float>) -> Int32 {
        options.temperature <= 0 ? Self.argmax(logits) : draw(logits)
    }

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

    /// The index of the largest value; the lowest index wins a tie.
    static func argmax(_ values: some Collection<Float>) -> Int32 {
        var best = 0
        var bestValue = -Float.infinity
        for (index, value) in values.enumerated() where value > bestValue {
            best = index
            bestValue = value
        }
        return Int32(best)
    }
}

/// xoshiro256** seeded through SplitMix64: fast, and the same sequence on every platform.
struct Xoshiro256: RandomNumberGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init(seed: UInt64) {
        var splitMix = seed
        func next() -> UInt64 {
            splitMix &+= 0x9E37_79B9_7F4A_7C15
            var z = splitMix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (next(), next(), next(), next())
    }

    mutating func next() -> UInt64 {
        let result = ((state.1 &* 5) << 7 | (state.1 &* 5) >> 57) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = state.3 << 45 | state.3 >> 19
        return result
    }

    /// A uniform double in [0, 1).
    mutating func nextUnitDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
