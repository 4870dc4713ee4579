import GGUF

/// Qwen3.5's mixture of experts (`qwen35moe`, Qwen3.5/3.6-35B-A3B): Qwen3.5's hybrid of Gated
/// DeltaNet and gated attention layers, each feed-forward a `MixtureOfExperts` with a gated shared
/// expert (llama.cpp's `build_layer_ffn` there).
struct Qwen35MoEArchitecture: ModelArchitecture {
    static let name = "qwen35moe"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        try Qwen35Architecture.configure(&configuration, gguf: gguf)
        try configuration.requireExperts(gguf: gguf)
    }

    /// The same model as Qwen3.5's: its feed-forwards load as experts (`FeedForward.load`).
    let hybrid: Qwen35Architecture

    init(weights: WeightLoader) throws(ModelError) {
        hybrid = try Qwen35Architecture(weights: weights)
    }

    var matrices: [Matrix] { hybrid.matrices }
    var tokenEmbedding: Matrix { hybrid.tokenEmbedding }
    var unembedding: Unembedding { hybrid.unembedding }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        hybrid.forward(tokens, state: state, allLogits: allLogits)
    }
}
