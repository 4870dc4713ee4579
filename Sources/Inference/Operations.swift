import Foundation

/// The transformer's building blocks besides matrix products: RMSNorm, RoPE, attention over the
/// KV cache, SwiGLU and residual addition.
enum Operations {
    typealias Vector = Kernels.Vector

    /// `output[t] = x[t] / rms(x[t]) * weights` for `count` rows of `width`.
    static func rmsNorm(_ x: UnsafeMutablePointer<Float>, weights: [Float], epsilon: Float,
                        into output: UnsafeMutablePointer<Float>, count: Int, width: Int) {
        weights.withUnsafeBufferPointer { weights in
            guard let weights = weights.baseAddress else { return }
            for row in 0..<count {
                let input = x + row * width, result = output + row * width
                let meanSquare = Kernels.dotF32(UnsafeRawPointer(input), input, width) / Float(width)
                let scale = 1 / (meanSquare + epsilon).squareRoot()
                for index in 0..<width { result[index] = input[index] * scale * weights[index] }
            }
        }
    }

    /// Fills the state's RoPE tables for `count` tokens starting at `start`.
    static func prepareRoPE(state: InferenceState, start: Int, count: Int, configuration: LlamaConfiguration) {
        let pairs = configuration.ropeDimensionCount / 2
        let base = Double(configuration.ropeFrequencyBase)
        for token in 0..<count {
            for pair in 0..<pairs {
                let angle = Double(start + token) * pow(base, -2 * Double(pair) / Double(configuration.ropeDimensionCount))
                state.ropeCosines[token * pairs + pair] = Float(cos(angle))
                state.ropeSines[token * pairs + pair] = Float(sin(angle))
            }
        }
    }

    /// Rotates adjacent pairs `(v[2i], v[2i+1])` of each head (llama's "normal" RoPE mode).
    static func rope(_ vector: UnsafeMutablePointer<Float>, heads: Int, cosines: UnsafeMutablePointer<Float>,
                     sines: UnsafeMutablePointer<Float>, configuration: LlamaConfiguration) {
        let headDimension = configuration.headDimension
        for head in 0..<heads {
            let pointer = vector + head * headDimension
            for pair in 0..<(configuration.ropeDimensionCount / 2) {
                let first = pointer[2 * pair], second = pointer[2 * pair + 1]
                let cosine = cosines[pair], sine = sines[pair]
                pointer[2 * pair] = first * cosine - second * sine
                pointer[2 * pair + 1] = first * sine + second * cosine
            }
        }
    }

    /// Causal grouped-query attention of each new token's query heads over the cache.
    static func attention(state: InferenceState, layer: Int, count: Int, configuration: LlamaConfiguration) {
        let headDimension = configuration.headDimension
        let heads = configuration.headCount
        let kvDimension = configuration.kvDimension
        let group = heads / configuration.headCountKV
        let scale = 1 / Float(headDimension).squareRoot()
        let keys = state.keyCache(layer: layer), values = state.valueCache(layer: layer)
        let start = state.position
        let work = count * heads * (start + count) * headDimension
        state.pool.parallelFor(count * heads, work: work * 8) { part, range in
            let scores = state.scores + part * state.contextLength
            for item in range {
                let token = item / heads, head = item % heads
                let length = start + token + 1
                let query = state.query + token * configuration.embeddingLength + head * headDimension
                let kvOffset = (head / group) * headDimension
                var maximum = -Float.infinity
                for position in 0..<length {
                    let score = Kernels.dotF32(UnsafeRawPointer(keys + position * kvDimension + kvOffset), query, headDimension) * scale
                    scores[position] = score
                    maximum = max(maximum, score)
                }
                var total: Float = 0
                for position in 0..<length {
                    let weight = exp(scores[position] - maximum)
                    scores[position] = weight
                    total += weight
                }
                let output = state.attended + token * configuration.embeddingLength + head * headDimension
                output.update(repeating: 0, count: headDimension)
                for position in 0..<length {
                    let weight = scores[position] / total
                    let value = values + position * kvDimension + kvOffset
                    for index in 0..<headDimension { output[index] += weight * value[index] }
                }
            }
        }
    }

    /// `gate = silu(gate) * up`, elementwise.
    static func swiGLU(_ gate: UnsafeMutablePointer<Float>, _ up: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count {
            let value = gate[index]
            gate[index] = value / (1 + exp(-value)) * up[index]
        }
    }

    /// `x += delta`, elementwise.
    static func add(_ delta: UnsafeMutablePointer<Float>, to x: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count { x[index] += delta[index] }
    }
}
