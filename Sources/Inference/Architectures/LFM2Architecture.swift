import GGUF

/// Liquid's LFM2 (`lfm2`, LFM2 and LFM2.5): a hybrid of short-convolution layers
/// (`ShortConvolution`) and attention layers with per-head query and key norms and NeoX RoPE —
/// a layer with no key/value heads (`attention.head_count_kv`, a count per layer) is a
/// convolution — each followed by a SwiGLU feed-forward, or by a mixture of experts past the
/// leading dense layers in LFM2-MoE (`LFM2MoEArchitecture`). The final norm is stored as
/// `token_embd_norm`. With a sliding window, every attention layer slides, as llama.cpp reads it.
struct LFM2Architecture: ModelArchitecture {
    static let name = "lfm2"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        let prefix = configuration.architecture + "."
        guard let width = gguf.metadata[prefix + "shortconv.l_cache"]?.intValue, width > 1, width <= 64 else {
            throw ModelError(file: gguf.path, field: prefix + "shortconv.l_cache", reason: "is missing or not a convolution width from 2 to 64")
        }
        let layers = configuration.blockCount
        if let counts = gguf.metadata[prefix + "attention.head_count_kv"]?.arrayValue {
            guard counts.count == layers else {
                throw ModelError(file: gguf.path, field: prefix + "attention.head_count_kv", reason: "has \(counts.count) entries for \(layers) layers")
            }
            configuration.recurrentLayers = counts.map { $0.intValue == 0 }
        }
        let dimension = configuration.embeddingLength
        configuration.recurrence = ModelConfiguration.Recurrence(convolutionWidth: width, convolutionChannels: dimension,
                                                                 projectedWidth: 3 * dimension, deltaRule: nil)
        if configuration.slidingWindow != nil {
            configuration.slidingLayers = (0..<layers).map { !configuration.isRecurrent(layer: $0) }
        }
    }

    /// What mixes positions in a layer.
    enum Mixer: Sendable {
        case convolution(ShortConvolution)
        case attention(SelfAttention)
    }

    struct Block: Sendable {
        /// The norm before the mixer (llama.cpp's `operator_norm`) and before the feed-forward.
        let mixerNorm, feedForwardNorm: [Float]
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
            let mixer: Mixer = if let recurrence = c.recurrence, c.isRecurrent(layer: index) {
                .convolution(try ShortConvolution.load(layer: index, from: weights, width: recurrence.convolutionWidth))
            } else {
                .attention(try SelfAttention.load(layer: index, from: weights, queryKeyNorms: true))
            }
            // Its graph gives the dense feed-forward neither scales nor biases.
            blocks.append(Block(mixerNorm: try weights.vector(.attentionNorm, layer: index),
                                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index), mixer: mixer,
                                feedForward: try FeedForward.load(layer: index, from: weights, extras: [], experts: .lfm2)))
        }
        self.blocks = blocks
        outputNorm = try weights.vector(.tokenEmbeddingNorm)
    }

    var matrices: [Matrix] {
        blocks.flatMap { block in
            switch block.mixer {
            case let .convolution(convolution): convolution.matrices + block.feedForward.matrices
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
            Operations.rmsNorm(x, weights: block.mixerNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            switch block.mixer {
            case let .convolution(convolution): convolution.apply(normed, into: normed, count: count, layer: layer, state: state)
            case let .attention(attention): attention.apply(normed, into: normed, count: count, layer: layer, configuration: c, state: state)
            }
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            block.feedForward.addResidual(to: x, norm: block.feedForwardNorm, layer: layer, count: count, configuration: c, state: state)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
}
