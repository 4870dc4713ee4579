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
        configuration.unrotatedLayers = (0..<configuration.blockCount).map { ($0 + 1) % unrotatedLayerStep == 0 }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, feedForward: .bias)
        }
    }
}
