import CKernels
import Foundation

/// The transformer's elementwise building blocks besides matrix products, shared by every
/// architecture: RMSNorm, softcapping, SwiGLU and GeGLU, embedding rows, biases, scaling,
/// residual addition, softmax and log Σ exp — what `CPUCompute` and the tensors' reductions
/// call.
package enum Operations {
    /// `output[t] = x[t] / rms(x[t]) * weights` for `count` rows of `width`.
    package static func rmsNorm(_ x: UnsafeMutablePointer<Float>, weights: [Float], epsilon: Float,
                        into output: UnsafeMutablePointer<Float>, count: Int, width: Int) {
        weights.withUnsafeBufferPointer { weights in
            guard let weights = weights.baseAddress else { return }
            for row in 0..<count {
                let input = x + row * width, result = output + row * width
                let meanSquare = lumen_dot_f32(input, input, width) / Float(width)
                let scale = 1 / (meanSquare + epsilon).squareRoot()
                for index in 0..<width { result[index] = input[index] * scale * weights[index] }
            }
        }
    }

    /// `cap · tanh(x / cap)`, elementwise (Gemma's final logit softcapping).
    package static func softcap(_ x: UnsafeMutablePointer<Float>, cap: Float, count: Int) {
        for index in 0..<count { x[index] = cap * tanh(x[index] / cap) }
    }

    /// `gate = gelu(gate) * up`, elementwise, with GELU's tanh approximation (as ggml), split
    /// across the pool's threads (`tanh` is the costly part of a Gemma prompt batch otherwise).
    package static func geGLU(_ gate: UnsafeMutablePointer<Float>, _ up: UnsafeMutablePointer<Float>, count: Int, pool: MatrixMultiplier) {
        let coefficient: Float = 0.797_884_560_802_865_4  // √(2/π)
        pool.parallelChunks(count, chunk: 1024, work: count * 64) { _, range in
            for index in range {
                let x = gate[index]
                gate[index] = 0.5 * x * (1 + tanh(coefficient * x * (1 + 0.044715 * x * x))) * up[index]
            }
        }
    }

    /// Writes the embedding row of each token into `x` (`width` floats a token).
    package static func embed(_ tokens: [Int32], from embedding: Matrix, into x: UnsafeMutablePointer<Float>, width: Int) {
        for (index, token) in tokens.enumerated() {
            embedding.dequantize(row: Int(token), into: x + index * width)
        }
    }

    /// Adds `bias` to each of `count` rows (`bias.count` wide) of `x`.
    package static func addBias(_ bias: [Float], to x: UnsafeMutablePointer<Float>, count: Int) {
        for row in 0..<count {
            let pointer = x + row * bias.count
            for index in bias.indices { pointer[index] += bias[index] }
        }
    }

    /// `x *= factor`, elementwise.
    package static func scale(_ x: UnsafeMutablePointer<Float>, by factor: Float, count: Int) {
        for index in 0..<count { x[index] *= factor }
    }

    /// `gate = silu(gate) * up`, elementwise, split across the pool's threads.
    package static func swiGLU(_ gate: UnsafeMutablePointer<Float>, _ up: UnsafeMutablePointer<Float>, count: Int, pool: MatrixMultiplier) {
        pool.parallelChunks(count, chunk: 1024, work: count * 16) { _, range in
            for index in range {
                let value = gate[index]
                gate[index] = value / (1 + exp(-value)) * up[index]
            }
        }
    }

    /// gpt-oss's clamped SwiGLU (`ggml_swiglu_oai` with α 1.702 and limit 7), elementwise:
    /// `gate = g · sigmoid(1.702 g) · (clamp(up, −7, 7) + 1)` with g = min(gate, 7).
    package static func clampedSwiGLU(_ gate: UnsafeMutablePointer<Float>, _ up: UnsafeMutablePointer<Float>, count: Int, pool: MatrixMultiplier) {
        let alpha: Float = 1.702, limit: Float = 7
        pool.parallelChunks(count, chunk: 1024, work: count * 16) { _, range in
            for index in range {
                let g = min(gate[index], limit), u = min(max(up[index], -limit), limit)
                gate[index] = g / (1 + exp(-alpha * g)) * (u + 1)
            }
        }
    }

    /// log Σ exp(x) over `count` floats, stably (the maximum subtracted, the sum in double
    /// precision, as llama-perplexity does): `lumen_log_sum_exp`.
    package static func logSumExp(_ x: UnsafePointer<Float>, count: Int) -> Float {
        lumen_log_sum_exp(x, count)
    }

    /// The softmax of `count` floats into `output` (which may be `x`), as NumPy's: e^(x − max) over
    /// their sum; with `normalizer` (a part of a longer row: log Σ e^x over all of it) e^(x −
    /// it); `logarithmic`, x − log Σ e^x (or x − `normalizer`). A NaN anywhere gives NaN throughout
    /// (`lumen_softmax_f32`).
    package static func softmax(_ x: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>, logarithmic: Bool,
                                normalizer: UnsafePointer<Float>? = nil) {
        lumen_softmax_f32(x, count, output, logarithmic ? 1 : 0, normalizer)
    }

    /// `x += delta`, elementwise.
    package static func add(_ delta: UnsafeMutablePointer<Float>, to x: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count { x[index] += delta[index] }
    }
}
