import GGUF

/// LLaMA (`llama`), which also covers Llama 3 (per-dimension RoPE factors in `rope_freqs`),
/// Mistral-style files and SmolLM: pre-norm blocks of grouped-query attention with RoPE on
/// adjacent pairs and a SwiGLU feed-forward — or, in Mixtral-style files, routed experts as wide
/// as the feed-forward length (`MixtureOfExperts`).
struct LlamaArchitecture: DecoderArchitecture {
    static let name = "llama"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .adjacent
        configuration.experts?.feedForwardLength = configuration.feedForwardLength
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights, ropeFactors: .ropeFrequencies) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, feedForward: .all)
        }
    }
}
