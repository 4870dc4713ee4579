import GGUF

/// Liquid's LFM2 (`lfm2`, LFM2 and LFM2.5): a hybrid of short-convolution layers
/// (`ShortConvolution`) and attention layers with per-head query and key norms and NeoX RoPE —
/// a layer with no key/value heads (`attention.head_count_kv`, a count per layer) is a
/// convolution — each followed by a SwiGLU feed-forward, or by a mixture of experts past the
/// leading dense layers in LFM2-MoE (`LFM2MoEArchitecture`). The final norm is stored as
/// `token_embd_norm`. With a sliding window, every attention layer slides, as llama.cpp reads it.
struct LFM2Architecture: DecoderArchitecture {
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
            configuration.setEachLayer(\.isRecurrent, to: counts.map { $0.intValue == 0 })
        }
        let dimension = configuration.embeddingLength
        configuration.recurrence = ModelConfiguration.Recurrence(convolutionWidth: width, convolutionChannels: dimension, deltaRule: nil)
        if configuration.slidingWindow != nil {
            configuration.setEachLayer(\.slides, to: (0..<layers).map { !configuration.isRecurrent(layer: $0) })
        }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        decoder = try DecoderModel(weights: weights, outputNorm: .tokenEmbeddingNorm) { (index: Int) throws(ModelError) in
            let mixer: any Sublayer = if let recurrence = c.recurrence, c.isRecurrent(layer: index) {
                try ShortConvolution.load(layer: index, from: weights, width: recurrence.convolutionWidth)
            } else {
                try SelfAttention.load(layer: index, from: weights, queryKeyNorms: true)
            }
            // Its graph gives the dense feed-forward neither scales nor biases.
            return DecoderBlock(mixerNorm: try weights.vector(.attentionNorm, layer: index),
                                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index), mixer: mixer,
                                feedForward: try FeedForward.load(layer: index, from: weights, extras: [], experts: .lfm2))
        }
    }
}
