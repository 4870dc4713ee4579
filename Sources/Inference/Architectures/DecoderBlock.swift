import GGUF

/// The pre-norm decoder block LLaMA made common: x += mixer(RMSNorm(x)), then
/// x += feed-forward(RMSNorm(x)). The mixer is attention in most architectures (`load`: LLaMA,
/// Qwen 2, Qwen 3, Phi-3, SmolLM3, gpt-oss, LFM2's attention layers) and, in the hybrid ones, a
/// recurrent layer or gated attention (`TokenMixer`).
struct DecoderBlock: Sendable {
    /// The norms before the mixer and before the feed-forward.
    let mixerNorm, feedForwardNorm: [Float]
    let mixer: any TokenMixer
    let feedForward: FeedForward

    /// The attention block of layer `index` under llama.cpp's names: its attention
    /// (`SelfAttention.load` with `biases`, `queryKeyNorms` and `sinks`), and a feed-forward with
    /// separate gate and up tensors taking the scale and bias of `feedForward` the file has (what
    /// the architecture's llama.cpp graph passes to `build_ffn`), normed by `feedForwardNorm`
    /// (gpt-oss names it `post_attention_norm`), its experts of the `experts` variant.
    static func load(layer index: Int, from weights: WeightLoader, biases: Bool = false, queryKeyNorms: Bool = false,
                     sinks: Bool = false, feedForwardNorm: TensorName = .feedForwardNorm,
                     feedForward: Projection.Extras, experts: MixtureOfExperts.Variant = .standard) throws(ModelError) -> DecoderBlock {
        DecoderBlock(
            mixerNorm: try weights.vector(.attentionNorm, layer: index),
            feedForwardNorm: try weights.vector(feedForwardNorm, layer: index),
            mixer: try SelfAttention.load(layer: index, from: weights, biases: biases, queryKeyNorms: queryKeyNorms, sinks: sinks),
            feedForward: try FeedForward.load(layer: index, from: weights, extras: feedForward, experts: experts))
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { mixer.matrices + feedForward.matrices }
}

/// A whole model made of `DecoderBlock`s: embedding, blocks, final norm and output.
struct DecoderModel: Sendable {
    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [DecoderBlock]
    let outputNorm: [Float]
    let output: Projection
    /// Per-pair RoPE frequency factors (Llama 3's `rope_freqs`, Phi-3's short factors).
    let ropeFactors: [Float]?
    /// The factors for sessions longer than the context RoPE was trained for (Phi-3's long ones).
    let longRopeFactors: [Float]?

    /// Reads the embedding, output and final norm (`outputNorm`), the RoPE factors the file has,
    /// and `block(layer)` for each layer.
    init(weights: WeightLoader, outputNorm: TensorName = .outputNorm, ropeFactors: TensorName? = nil, longRopeFactors: TensorName? = nil,
         block: (Int) throws(ModelError) -> DecoderBlock) throws(ModelError) {
        configuration = weights.configuration
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [DecoderBlock] = []
        for index in 0..<configuration.blockCount { blocks.append(try block(index)) }
        self.blocks = blocks
        self.outputNorm = try weights.vector(outputNorm)
        func factors(_ name: TensorName?) throws(ModelError) -> [Float]? {
            guard let name, weights.has(name) else { return nil }
            return try weights.vector(name, length: weights.configuration.ropeDimensionCount / 2)
        }
        self.ropeFactors = try factors(ropeFactors)
        self.longRopeFactors = try factors(longRopeFactors)
    }

    /// The RoPE factors for sessions of `contextLength` positions a sequence: the long ones past
    /// the trained context, as llama.cpp's `get_rope_factors` chooses by `n_ctx_seq`.
    func ropeFactors(forContext contextLength: Int) -> [Float]? {
        if let longRopeFactors, contextLength > configuration.ropeOriginalContextLength { return longRopeFactors }
        return ropeFactors
    }

    var unembedding: Unembedding { Unembedding(norm: outputNorm, output: output) }

    /// Every matrix one generated token reads.
    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [output.matrix] }

    /// The forward pass, as `ModelArchitecture.forward`: embedding rows → per block
    /// x += mixer(RMSNorm(x)) (attention rotates with the session's RoPE factors), then
    /// x += feed-forward(RMSNorm(x)) → final norm → logits.
    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let c = configuration
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual, normed = state.normed
        Operations.embed(tokens, from: tokenEmbedding, into: x, width: dimension)
        Operations.prepareRoPE(state: state, configuration: c, factors: ropeFactors(forContext: state.contextLength))
        for (layer, block) in blocks.enumerated() {
            Operations.rmsNorm(x, weights: block.mixerNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            block.mixer.apply(normed, into: normed, count: count, layer: layer, configuration: c, state: state)
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            block.feedForward.addResidual(to: x, norm: block.feedForwardNorm, layer: layer, count: count, configuration: c, state: state)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
}

/// A whole model's forward pass and what it reads: `DecoderModel`, `GemmaDecoder`.
protocol DecoderPass: Sendable {
    var tokenEmbedding: Matrix { get }
    var unembedding: Unembedding { get }
    /// Every matrix one generated token reads.
    var matrices: [Matrix] { get }
    /// As `ModelArchitecture.forward`.
    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool)
}

extension DecoderModel: DecoderPass {}

/// An architecture whose model is a `DecoderPass`: its matrices and forward pass come from it.
protocol DecoderArchitecture: ModelArchitecture {
    associatedtype Decoder: DecoderPass
    var decoder: Decoder { get }
}

extension DecoderArchitecture {
    var matrices: [Matrix] { decoder.matrices }
    var tokenEmbedding: Matrix { decoder.tokenEmbedding }
    var unembedding: Unembedding { decoder.unembedding }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        decoder.forward(tokens, state: state, allLogits: allLogits)
    }
}
