import GGUF

/// Qwen3.5 (`qwen35`): a hybrid of Gated DeltaNet layers (`GatedDeltaNet`) and gated attention
/// (`GatedAttention`), three recurrent layers to each attention one unless the file lists them
/// (`attention.recurrent_layers`, else `full_attention_interval`), each followed by a SwiGLU
/// feed-forward after the post-attention norm. Its multi-section RoPE rotates on halves, and a
/// text token's position is the same in every section, so it is plain RoPE over
/// `rope.dimension_count` dimensions of each head.
struct Qwen35Architecture: DecoderArchitecture {
    static let name = "qwen35"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        let prefix = configuration.architecture + "."
        let valueHeads = try configuration.integer("ssm.time_step_rank", in: gguf), keyHeads = try configuration.integer("ssm.group_count", in: gguf)
        let inner = try configuration.integer("ssm.inner_size", in: gguf), keyWidth = try configuration.integer("ssm.state_size", in: gguf)
        guard inner % valueHeads == 0, inner / valueHeads == keyWidth, valueHeads % keyHeads == 0 else {
            throw ModelError(file: gguf.path, field: prefix + "ssm.inner_size",
                             reason: "\(inner) over \(valueHeads) value heads of \(keyHeads) key heads of \(keyWidth): value and key heads must be as wide, and key heads divide value heads")
        }
        let rule = ModelConfiguration.DeltaRule(keyHeads: keyHeads, valueHeads: valueHeads, keyHeadDimension: keyWidth,
                                                valueHeadDimension: inner / valueHeads)
        configuration.recurrence = ModelConfiguration.Recurrence(convolutionWidth: try configuration.integer("ssm.conv_kernel", in: gguf), convolutionChannels: rule.channels,
                                                                 deltaRule: rule)
        let layers = configuration.blockCount
        if let flags = gguf.metadata[prefix + "attention.recurrent_layers"]?.arrayValue {
            guard flags.count == layers else {
                throw ModelError(file: gguf.path, field: prefix + "attention.recurrent_layers", reason: "has \(flags.count) entries for \(layers) layers")
            }
            configuration.setEachLayer(\.isRecurrent, to: flags.map { if case .bool(true) = $0 { true } else { $0.intValue == 1 } })
        } else {
            let interval = gguf.metadata[prefix + "full_attention_interval"]?.intValue ?? 4
            configuration.setEachLayer(\.isRecurrent, to: (0..<layers).map { ($0 + 1) % max(1, interval) != 0 })
        }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        decoder = try DecoderModel(weights: weights) { (index: Int) throws(ModelError) in
            let mixer: any Sublayer = if let recurrence = c.recurrence, let rule = recurrence.deltaRule, c.isRecurrent(layer: index) {
                try GatedDeltaNet.load(layer: index, from: weights, convolutionWidth: recurrence.convolutionWidth, shape: rule)
            } else {
                try GatedAttention.load(layer: index, from: weights)
            }
            return DecoderBlock(mixerNorm: try weights.vector(.attentionNorm, layer: index),
                                feedForwardNorm: try weights.vector(.attentionPostNorm, layer: index), mixer: mixer,
                                feedForward: try FeedForward.load(layer: index, from: weights, extras: .scale))
        }
    }
}
