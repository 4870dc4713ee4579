import CPUBackend
import GGUF

/// A short causal convolution over each channel of a recurrent layer (ggml's `ssm_conv`, in
/// Gated DeltaNet and LFM2's short-convolution layers): a channel's output at a token is its
/// last `width` inputs, the current one last, times the channel's `width` weights. The
/// `width − 1` inputs before a pass start each sequence's recurrent state in the layer
/// (`InferenceState.recurrentStates`), zeroed when a sequence starts at position 0.
struct CausalConvolution: Sendable {
    /// A row of `width` weights per channel, and whether outputs go through SiLU.
    let weights: CausalConvolutionWeights

    /// The convolution `role` of block `index`: `channels` rows of `width` weights, its outputs
    /// through SiLU (Gated DeltaNet's) when `silu`, else as they are (LFM2's).
    static func load(_ role: TensorName, layer index: Int, from weights: WeightLoader, width: Int, channels: Int,
                     silu: Bool) throws(ModelError) -> CausalConvolution {
        CausalConvolution(weights: CausalConvolutionWeights(weights: try weights.table(role, layer: index, columns: width, rows: channels),
                                                            width: width, silu: silu))
    }

    /// Inputs a channel's output sees, the current one included.
    var width: Int { weights.width }

    /// Convolves the first `channels` floats of each of `count` rows (`stride` floats apart) in
    /// place, continuing each row's sequence's kept inputs in `layer`.
    func apply(_ rows: UnsafeMutablePointer<Float>, stride: Int, channels: Int, count: Int, layer: Int, state: InferenceState) {
        state.backend.convolve(rows, stride: stride, channels: channels, count: count, places: state.places, convolution: weights,
                               states: state.recurrentStates(layer: layer))
    }
}
