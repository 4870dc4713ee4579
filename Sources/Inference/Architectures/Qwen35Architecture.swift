import GGUF

/// Qwen3.5 (`qwen35`): a hybrid of Gated DeltaNet layers (`GatedDeltaNet`) and gated attention
/// (`GatedAttention`), three recurrent layers to each attention one unless the file lists them
/// (`attention.recurrent_layers`, else `full_attention_interval`), each followed by a SwiGLU
/// feed-forward after the post-attention norm. Its multi-section RoPE rotates on halves, and a
/// text token's position is the same in every section, so it is plain RoPE over
/// `rope.dimension_count` dimensions of each head.
struct Qwen35Architecture: ModelArchitecture {
    static let name = "qwen35"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        let prefix = configuration.architecture + "."
        func integer(_ key: String) throws(ModelError) -> Int {
            guard let value = gguf.metadata[prefix + key]?.intValue, value > 0 else {
                throw ModelError(file: gguf.path, field: prefix + key, reason: "is missing or not a positive integer")
            }
            return value
        }
        let valueHeads = try integer("ssm.time_step_rank"), keyHeads = try integer("ssm.group_count")
        let inner = try integer("ssm.inner_size"), keyWidth = try integer("ssm.state_size")
        guard inner % valueHeads == 0, inner / valueHeads == keyWidth, valueHeads % keyHeads == 0 else {
            throw ModelError(file: gguf.path, field: prefix + "ssm.inner_size",
                             reason: "\(inner) over \(valueHeads) value heads of \(keyHeads) key heads of \(keyWidth): value and key heads must be as wide, and key heads divide value heads")
        }
        let rule = ModelConfiguration.DeltaRule(keyHeads: keyHeads, valueHeads: valueHeads, keyHeadDimension: keyWidth,
                                                valueHeadDimension: inner / valueHeads)
        configuration.recurrence = ModelConfiguration.Recurrence(convolutionWidth: try integer("ssm.conv_kernel"), convolutionChannels: rule.channels,
                                                                 projectedWidth: rule.channels, deltaRule: rule)
        let layers = configuration.blockCount
        if let flags = gguf.metadata[prefix + "attention.recurrent_layers"]?.arrayValue {
            guard flags.count == layers else {
                throw ModelError(file: gguf.path, field: prefix + "attention.recurrent_layers", reason: "has \(flags.count) entries for \(layers) layers")
            }
            configuration.recurrentLayers = flags.map { if case .bool(true) = $0 { true } else { $0.intValue == 1 } }
        } else {
            let interval = gguf.metadata[prefix + "full_attention_interval"]?.intValue ?? 4
            configuration.recurrentLayers = (0..<layers).map { ($0 + 1) % max(1, interval) != 0 }
        }
    }

    /// What mixes positions in a layer.
    enum Mixer: Sendable {
        case recurrent(GatedDeltaNet)
        case attention(GatedAttention)
    }

    struct Block: Sendable {
        let attentionNorm, postAttentionNorm: [Float]
        let mixer: Mixer
        let feedForward: FeedForward
    }

    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [Block]
    let outputNorm: [Float]
    let output: Projection
    var unembedding: Unembedding { Unembedding(norm: outputNorm, output: output) }

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        configuration = c
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [Block] = []
        for index in 0..<c.blockCount {
            let mixer: Mixer = if let recurrence = c.recurrence, let rule = recurrence.deltaRule, c.isRecurrent(layer: index) {
                .recurrent(try GatedDeltaNet.load(layer: index, from: weights, convolutionWidth: recurrence.convolutionWidth, shape: rule))
            } else {
                .attention(try GatedAttention.load(layer: index, from: weights))
            }
            blocks.append(Block(attentionNorm: try weights.vector(.attentionNorm, layer: index),
                                postAttentionNorm: try weights.vector(.attentionPostNorm, layer: index),
                                mixer: mixer, feedForward: try FeedForward.load(layer: index, from: weights, extras: .scale)))
        }
        self.blocks = blocks
        outputNorm = try weights.vector(.outputNorm)
    }

    var matrices: [Matrix] {
        blocks.flatMap { block in
            switch block.mixer {
            case let .recurrent(net): net.matrices + block.feedForward.matrices
            case let .attention(attention): attention.matrices + block.feedForward.matrices
            }
        } + [output.matrix]
    }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let c = configuration
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual, normed = state.normed
        Operations.embed(tokens, from: tokenEmbedding, into: x, width: dimension)
        Operations.prepareRoPE(positions: state.rowPositions, configuration: c, base: c.ropeFrequencyBase,
                               cosines: state.ropeCosines, sines: state.ropeSines)
        for (layer, block) in blocks.enumerated() {
            Operations.rmsNorm(x, weights: block.attentionNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            switch block.mixer {
            case let .recurrent(net): net.apply(normed, into: normed, count: count, layer: layer, epsilon: c.rmsEpsilon, state: state)
            case let .attention(attention): attention.apply(normed, into: normed, count: count, layer: layer, configuration: c, state: state)
            }
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            block.feedForward.addResidual(to: x, norm: block.postAttentionNorm, layer: layer, count: count, configuration: c, state: state)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
}
