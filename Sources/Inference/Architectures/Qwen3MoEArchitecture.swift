import GGUF

/// Qwen 3's mixture of experts (`qwen3moe`, Qwen3-30B-A3B and 235B-A22B): Qwen 3's attention
/// block with a feed-forward of routed experts in every layer (`MixtureOfExperts`, softmax gating
/// and the chosen experts' weights normalized, as llama.cpp's graph asks), no shared expert.
struct Qwen3MoEArchitecture: DecoderArchitecture {
    static let name = "qwen3moe"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        try configuration.requireExperts(gguf: gguf)
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, queryKeyNorms: true, feedForward: [])
        }
    }
}
