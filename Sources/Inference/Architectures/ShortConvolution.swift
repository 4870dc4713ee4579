import CPUBackend
import GGUF

/// LFM2's short-convolution layer (llama.cpp's `build_shortconv_block`): one product of the input
/// (`shortconv.in_proj`) gives three parts b, c and x; b ⊙ x goes through a short causal
/// convolution (`CausalConvolution`, no activation), c gates its output, and the product is
/// projected back (`shortconv.out_proj`). The convolution's last inputs are each sequence's
/// recurrent state in the layer.
struct ShortConvolution: Sublayer {
    let input: Projection
    let convolution: CausalConvolution
    let output: Projection

    /// The layer `index` under llama.cpp's names, with a convolution over `width` inputs (its
    /// graph applies neither scales nor biases).
    static func load(layer index: Int, from weights: WeightLoader, width: Int) throws(ModelError) -> ShortConvolution {
        let dimension = weights.configuration.embeddingLength
        return ShortConvolution(
            input: try weights.projection(.shortConvolutionInput, layer: index, columns: dimension, rows: 3 * dimension, applies: []),
            convolution: try CausalConvolution.load(.shortConvolution, layer: index, from: weights, width: width, channels: dimension, silu: false),
            output: try weights.projection(.shortConvolutionOutput, layer: index, columns: dimension, rows: dimension, applies: []))
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { [input.matrix, output.matrix] }

    /// Its scratch: the input product's three parts, b, c and x, side by side.
    static let parts = ScratchBuffer("convolution parts")

    var scratch: [ScratchNeed] { [Self.parts.need(floatsPerRow: input.matrix.rows)] }

    /// The layer over `count` rows of `input` into `output` (which may be `input`), continuing
    /// each row's sequence's state in `layer`.
    func apply(_ rows: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState) {
        let dimension = self.output.matrix.rows, stride = 3 * dimension, mixed = state.scratch(Self.parts)
        input.apply(rows, into: mixed, count: count, state: state)
        // b ⊙ x where b was, convolved there.
        for row in 0..<count {
            let b = mixed + row * stride, x = b + 2 * dimension
            for index in 0..<dimension { b[index] *= x[index] }
        }
        convolution.apply(mixed, stride: stride, channels: dimension, count: count, layer: layer, state: state)
        // c ⊙ convolved, packed into rows of `dimension` at the buffer's start: row r's result
        // ends before row r's parts begin (r ≥ 1), and row 0's is written where it is read.
        for row in 0..<count {
            let convolved = mixed + row * stride, c = convolved + dimension, packed = mixed + row * dimension
            for index in 0..<dimension { packed[index] = c[index] * convolved[index] }
        }
        self.output.apply(mixed, into: output, count: count, state: state)
    }
}
