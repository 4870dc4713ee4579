import GGUF

/// Qwen 2 and 2.5 (`qwen2`): LLaMA's block with biases on the Q/K/V products and RoPE on halves.
struct Qwen2Architecture: DecoderArchitecture {
    static let name = "qwen2"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, biases: true, feedForward: [])
        }
    }
}
