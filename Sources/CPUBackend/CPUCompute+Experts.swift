import Foundation

/// A mixture of experts' routing and combining on the CPU, as llama.cpp's `build_moe_ffn`.
extension CPUCompute {
    /// The least the chosen probabilities are divided by: their sum, clamped to at least the
    /// smallest normal F16, as llama.cpp clamps it.
    private static let smallestSum: Float = 6.103515625e-5

    /// The softmax (or each score's sigmoid) of each row, then the `used` experts of highest
    /// probability plus selection bias, the first of equals first; their probabilities divided
    /// by their sum.
    package func route(_ scores: UnsafeMutablePointer<Float>, count: Int, experts: Int, used: Int, gating: ExpertGating,
                       selectionBias: [Float]?) -> ExpertRouting {
        var routing = ExpertRouting(used: used, chosen: [Int](repeating: 0, count: count * used), weights: [Float](repeating: 0, count: count * used))
        for row in 0..<count {
            let probabilities = scores + row * experts
            switch gating {
            case .softmax: Self.softmax(probabilities, count: experts)
            case .sigmoid: for expert in 0..<experts { probabilities[expert] = 1 / (1 + exp(-probabilities[expert])) }
            }
            let selection = { (expert: Int) in probabilities[expert] + (selectionBias?[expert] ?? 0) }
            var sum: Float = 0
            for slot in 0..<used {
                var best = -1
                for expert in 0..<experts where !routing.chosen[(row * used)..<(row * used + slot)].contains(expert) {
                    if best < 0 || selection(expert) > selection(best) { best = expert }
                }
                routing.chosen[row * used + slot] = best
                routing.weights[row * used + slot] = probabilities[best]
                sum += probabilities[best]
            }
            let divisor = max(sum, Self.smallestSum)
            for slot in 0..<used { routing.weights[row * used + slot] /= divisor }
        }
        return routing
    }

    package func combineExperts(_ outputs: UnsafeMutablePointer<Float>, routing: ExpertRouting,
                                shared: (rows: UnsafeMutablePointer<Float>, gates: [Float])?, into output: UnsafeMutablePointer<Float>,
                                count: Int, width: Int) {
        let used = routing.used
        for row in 0..<count {
            let target = output + row * width
            for slot in 0..<used {
                let weight = routing.weights[row * used + slot], source = outputs + (row * used + slot) * width
                if slot == 0 {
                    for index in 0..<width { target[index] = source[index] * weight }
                } else {
                    for index in 0..<width { target[index] += source[index] * weight }
                }
            }
            if let shared {
                let gate = shared.gates[row], source = shared.rows + row * width
                for index in 0..<width { target[index] += source[index] * gate }
            }
        }
    }

    package func sigmoidOfDots(_ vector: [Float], _ x: UnsafeMutablePointer<Float>, count: Int) -> [Float] {
        let width = vector.count
        return (0..<count).map { row in
            var sum: Float = 0
            for index in 0..<width { sum += vector[index] * x[row * width + index] }
            return 1 / (1 + exp(-sum))
        }
    }

    /// The softmax of `count` scores, in place (the sum in double precision).
    private static func softmax(_ scores: UnsafeMutablePointer<Float>, count: Int) {
        var maximum = -Float.infinity
        for index in 0..<count { maximum = max(maximum, scores[index]) }
        var total: Double = 0
        for index in 0..<count {
            scores[index] = exp(scores[index] - maximum)
            total += Double(scores[index])
        }
        let scale = Float(1 / total)
        for index in 0..<count { scores[index] *= scale }
    }
}
