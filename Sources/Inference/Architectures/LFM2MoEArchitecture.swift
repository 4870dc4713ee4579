import GGUF

/// LFM2's mixture of experts (`lfm2moe`, LFM2-8B-A1B and 24B-A2B): LFM2's hybrid with a
/// `MixtureOfExperts` feed-forward past the leading dense layers (`leading_dense_block_count`),
/// gated as the file says (`expert_gating_func`, sigmoid in the released files) with a selection
/// bias, the chosen weights normalized (llama.cpp's graph leaves `expert_weights_scale` unread).
struct LFM2MoEArchitecture: DecoderArchitecture {
    static let name = "lfm2moe"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        try LFM2Architecture.configure(&configuration, gguf: gguf)
        try configuration.requireExperts(gguf: gguf)
        let prefix = configuration.architecture + "."
        configuration.leadingDenseLayers = min(gguf.metadata[prefix + "leading_dense_block_count"]?.intValue ?? 0, configuration.blockCount)
        if let function = gguf.metadata[prefix + "expert_gating_func"]?.intValue {
            guard let gating = ExpertGating(rawValue: function) else {
                throw ModelError(file: gguf.path, field: prefix + "expert_gating_func", reason: "\(function) is not a gating Lumen runs (1, softmax, or 2, sigmoid)")
            }
            configuration.experts?.gating = gating
        }
    }

    /// The same model as LFM2's: its feed-forwards past the leading dense layers load as experts
    /// (`FeedForward.load`).
    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try LFM2Architecture(weights: weights).decoder
    }
}
