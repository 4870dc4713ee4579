import GGUF

/// OpenAI's gpt-oss (`gpt-oss`, llama.cpp's `openai-moe`): LLaMA's pre-norm block with biased
/// Q/K/V and output products, a learned attention sink per query head, sliding-window attention
/// in every other layer (the file's pattern, else even layers slide), NeoX RoPE with YaRN
/// scaling, and a mixture of experts in every layer: biased router, the chosen experts' scores
/// softmaxed among themselves, biased experts with the clamped SwiGLU (`GatedActivation.clampedSwiGLU`).
/// The feed-forward's norm is stored as `post_attention_norm`. Experts are MXFP4 in the released
/// files.
struct GptOssArchitecture: DecoderArchitecture {
    static let name = "gpt-oss"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        try configuration.requireExperts(gguf: gguf)
        guard configuration.slidingWindow != nil else {
            throw ModelError(file: gguf.path, field: "gpt-oss.attention.sliding_window", reason: "is missing: gpt-oss's layers alternate sliding and global attention")
        }
        try configuration.readSlidingWindowPattern(gguf: gguf, defaultPeriod: 2)
        configuration.slidingRopeFrequencyBase = gguf.metadata["gpt-oss.rope.freq_base_swa"]?.doubleValue.map { Float($0) }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            try DecoderBlock.load(layer: layer, from: weights, biases: true, sinks: true, feedForwardNorm: .attentionPostNorm,
                                  feedForward: [], experts: .gptOss)
        }
    }
}
