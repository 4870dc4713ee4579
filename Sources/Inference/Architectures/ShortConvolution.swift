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

    /// Its scratch: the input product's three parts, b, c and x, side by side; and the gated
    /// convolution's output.
    static let parts = ScratchBuffer("convolution parts"), gated = ScratchBuffer("gated convolution")

    var scratch: [ScratchNeed] { [Self.parts.need(floatsPerRow: input.matrix.rows), Self.gated.need(floatsPerRow: output.matrix.columns)] }

    /// The layer over `count` rows of `input` into `output` (which may be `input`), continuing
    /// each row's sequence's state in `layer`.
    func apply(_ rows: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState) {
        let dimension = self.output.matrix.rows, stride = 3 * dimension, mixed = state.scratch(Self.parts)
        input.apply(rows, into: mixed, count: count, state: state)
        // b ⊙ x where b was, convolved there; then c ⊙ convolved.
        state.backend.multiplyElementwise(mixed, stride: stride, mixed + 2 * dimension, stride: stride, into: mixed, stride: stride, width: dimension,
                                          count: count)
        convolution.apply(mixed, stride: stride, channels: dimension, count: count, layer: layer, state: state)
        let gated = state.scratch(Self.gated)
        state.backend.multiplyElementwise(mixed + dimension, stride: stride, mixed, stride: stride, into: gated, stride: dimension, width: dimension,
                                          count: count)
        self.output.apply(gated, into: output, count: count, state: state)
    }
}
