import GGUF

/// Qwen 3 (`qwen3`): LLaMA's block with per-head RMSNorm of queries and keys before RoPE on
/// halves, a head width of its own (`attention.key_length`) and, in small models, a tied output.
struct Qwen3Architecture: DecoderArchitecture {
    static let name = "qwen3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, queryKeyNorms: true, feedForward: .scale)
        }
    }
}
