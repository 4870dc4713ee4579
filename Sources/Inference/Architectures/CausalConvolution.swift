import Foundation
import GGUF

/// A short causal convolution over each channel of a recurrent layer (ggml's `ssm_conv`, in
/// Gated DeltaNet and LFM2's short-convolution layers): a channel's output at a token is its
/// last `width` inputs, the current one last, times the channel's `width` weights. The
/// `width − 1` inputs before a pass start each sequence's recurrent state in the layer
/// (`InferenceState.recurrentState`), zeroed when a sequence starts at position 0.
struct CausalConvolution: Sendable {
    /// A row of `width` weights per channel.
    let weights: [Float]
    /// Inputs a channel's output sees, the current one included.
    let width: Int

    /// The convolution `role` of block `index`: `channels` rows of `width` weights.
    static func load(_ role: TensorName, layer index: Int, from weights: WeightLoader, width: Int, channels: Int) throws(ModelError) -> CausalConvolution {
        CausalConvolution(weights: try weights.table(role, layer: index, columns: width, rows: channels), width: width)
    }

    /// Whether outputs go through SiLU (Gated DeltaNet's) or are left as they are (LFM2's).
    enum Activation: Sendable {
        case none, silu
    }

    /// Convolves the first `channels` floats of each of `count` rows (`stride` floats apart) in
    /// place, continuing each row's sequence's kept inputs in `layer`.
    func apply(_ rows: UnsafeMutablePointer<Float>, stride: Int, channels: Int, count: Int, layer: Int, activation: Activation,
               state: InferenceState) {
        let rowSequences = state.rowSequences, rowPositions = state.rowPositions, width = width, kept = width - 1
        // Channel by channel through the rows in order: each input is read before its output is
        // written, and then becomes the newest kept input.
        weights.withUnsafeBufferPointer { weights in
            state.pool.parallelChunks(channels, chunk: 64, work: count * channels * width) { _, range in
                for row in 0..<count {
                    let states = state.recurrentState(sequence: rowSequences[row], layer: layer)
                    for channel in range {
                        let history = states + channel * kept, tap = weights.baseAddress! + channel * width
                        if rowPositions[row] == 0 { history.update(repeating: 0, count: kept) }
                        let value = rows[row * stride + channel]
                        var sum: Float = 0
                        for index in 0..<kept { sum += history[index] * tap[index] }
                        sum += value * tap[kept]
                        for index in 0..<max(0, kept - 1) { history[index] = history[index + 1] }
                        if kept > 0 { history[kept - 1] = value }
                        rows[row * stride + channel] = switch activation {
                        case .none: sum
                        case .silu: sum / (1 + exp(-sum))
                        }
                    }
                }
            }
        }
    }
}
