import GGUF

/// Qwen3.5's mixture of experts (`qwen35moe`, Qwen3.5/3.6-35B-A3B): Qwen3.5's hybrid of Gated
/// DeltaNet and gated attention layers, each feed-forward a `MixtureOfExperts` with a gated shared
/// expert (llama.cpp's `build_layer_ffn` there).
struct Qwen35MoEArchitecture: DecoderArchitecture {
    static let name = "qwen35moe"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        try Qwen35Architecture.configure(&configuration, gguf: gguf)
        try configuration.requireExperts(gguf: gguf)
    }

    /// The same model as Qwen3.5's: its feed-forwards load as experts (`FeedForward.load`).
    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try Qwen35Architecture(weights: weights).decoder
    }
}
