import GGUF

/// SmolLM3 (`smollm3`): LLaMA's block, RoPE on adjacent pairs, except that every fourth layer
/// attends without position rotation (llama.cpp's `n_no_rope_layer_step` of 4), and a
/// feed-forward that takes biases but no scales.
struct SmolLM3Architecture: DecoderArchitecture {
    static let name = "smollm3"

    /// Every this many layers, the last does not rotate.
    static let unrotatedLayerStep = 4

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .adjacent
    }

    /// Whether RoPE rotates `layer`'s queries and keys.
    static func rotates(layer: Int) -> Bool { (layer + 1) % unrotatedLayerStep != 0 }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            var attention = try SelfAttention.load(layer: layer, from: weights)
            attention.rotates = Self.rotates(layer: layer)
            return DecoderBlock(mixerNorm: try weights.vector(.attentionNorm, layer: layer), feedForwardNorm: try weights.vector(.feedForwardNorm, layer: layer),
                                mixer: attention, feedForward: try FeedForward.load(layer: layer, from: weights, extras: .bias))
        }
    }

    var details: [(name: String, value: String)] {
        let layers = (0..<decoder.configuration.blockCount).filter { !Self.rotates(layer: $0) }
        return [("layers without RoPE", layers.map(String.init).joined(separator: ", "))]
    }
}
