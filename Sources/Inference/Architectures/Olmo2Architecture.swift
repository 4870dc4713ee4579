import GGUF

/// OLMo 2 (`olmo2`): blocks that norm each branch's output rather than its input (no pre-norms),
/// RMSNorm of queries and keys over all heads at once before RoPE on halves; OLMo 3's files add
/// sliding-window layers (three of every four unless the file's pattern says).
struct Olmo2Architecture: DecoderArchitecture {
    static let name = "olmo2"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        guard configuration.slidingWindow != nil else { return }
        try configuration.readSlidingWindowPattern(gguf: gguf, defaultPeriod: 4)
        // llama.cpp rotates the sliding layers without the file's RoPE scaling, which Lumen does
        // not separate yet.
        let scaling = configuration.ropeScaling
        guard scaling.frequencyScale == 1, scaling.extrapolation == 0, scaling.magnitude == 1 else {
            throw ModelError(file: gguf.path, field: "olmo2.rope.scaling.type", reason: "RoPE scaling with sliding-window layers is not supported yet")
        }
        configuration.slidingRopeFrequencyBase = gguf.metadata["olmo2.rope.freq_base_swa"]?.doubleValue.map { Float($0) }
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights) { (layer: Int) throws(ModelError) in
            DecoderBlock(stages: [
                ResidualBranch.mixer(norm: nil, try SelfAttention.load(layer: layer, from: weights, queryKeyNorms: true),
                                     postNorm: try weights.vector(.attentionPostNorm, layer: layer)),
                ResidualBranch.feedForward(norm: nil, try FeedForward.loadDense(layer: layer, from: weights, extras: []),
                                           postNorm: try weights.vector(.feedForwardPostNorm, layer: layer)),
            ])
        }
    }
}
