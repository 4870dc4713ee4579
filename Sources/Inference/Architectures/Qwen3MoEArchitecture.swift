import GGUF

/// Qwen 3's mixture of experts (`qwen3moe`, Qwen3-30B-A3B and 235B-A22B): Qwen 3's attention
/// block with a feed-forward of routed experts in every layer (`MixtureOfExperts`, softmax gating
/// and the chosen experts' weights normalized, as llama.cpp's graph asks), no shared expert.
struct Qwen3MoEArchitecture: DecoderArchitecture {
    static let name = "qwen3moe"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        guard configuration.experts != nil else {
            throw ModelError(file: gguf.path, field: "qwen3moe.expert_count", reason: "is missing: a qwen3moe model has experts")
        }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, queryKeyNorms: true, feedForward: [])
        }
    }
}
