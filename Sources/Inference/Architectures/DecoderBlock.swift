import GGUF

/// The pre-norm decoder block LLaMA made common, with the options its descendants add: biases on
/// the Q/K/V products (Qwen 2), per-head RMSNorm of queries and keys before RoPE (Qwen 3),
/// per-dimension RoPE frequency factors (Llama 3's `rope_freqs`), sliding-window layers and
/// per-head attention sinks (gpt-oss). Every product is a `Projection`, with the scale and bias the
/// file gives it. LLaMA, Qwen 2, Qwen 3, Phi-3 and gpt-oss read their tensors into it and share
/// its forward pass.
struct DecoderBlock: Sendable {
    let attentionNorm: [Float]
    let query, key, value: Projection
    var queryNorm, keyNorm: [Float]?
    /// Each query head's attention sink: a score in its softmax that attends to nothing.
    var sinks: [Float]?
    let attentionOutput: Projection
    let feedForwardNorm: [Float]
    let feedForward: FeedForward

    /// The block of layer `index` with separate Q/K/V and gate/up tensors under llama.cpp's names;
    /// `biases` requires the Q/K/V biases, `sinks` the attention sinks. The Q/K/V and attention
    /// output products take the scale and bias the file has, the feed-forward's those of
    /// `feedForward` (what the architecture's llama.cpp graph passes to `build_ffn`); the
    /// feed-forward's norm is `feedForwardNorm` (gpt-oss names it `post_attention_norm`), and
    /// experts are of the `experts` variant.
    static func load(layer index: Int, from weights: WeightLoader, biases: Bool = false, queryKeyNorms: Bool = false,
                     sinks: Bool = false, feedForwardNorm: TensorName = .feedForwardNorm,
                     feedForward: Projection.Extras, experts: MixtureOfExperts.Variant = .standard) throws(ModelError) -> DecoderBlock {
        let c = weights.configuration
        var block = DecoderBlock(
            attentionNorm: try weights.vector(.attentionNorm, layer: index),
            query: try weights.projection(.query, layer: index, columns: c.embeddingLength, rows: c.queryDimension, requireBias: biases),
            key: try weights.projection(.key, layer: index, columns: c.embeddingLength, rows: c.kvDimension, requireBias: biases),
            value: try weights.projection(.value, layer: index, columns: c.embeddingLength, rows: c.kvDimension, requireBias: biases),
            attentionOutput: try weights.projection(.attentionOutput, layer: index, columns: c.queryDimension, rows: c.embeddingLength),
            feedForwardNorm: try weights.vector(feedForwardNorm, layer: index),
            feedForward: try FeedForward.load(layer: index, from: weights, extras: feedForward, experts: experts))
        if sinks { block.sinks = try weights.vector(.attentionSinks, layer: index, length: c.headCount) }
        if queryKeyNorms {
            block.queryNorm = try weights.vector(.queryNorm, layer: index, length: c.headDimension)
            block.keyNorm = try weights.vector(.keyNorm, layer: index, length: c.headDimension)
        }
        return block
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { [query, key, value, attentionOutput].map(\.matrix) + feedForward.matrices }

    /// The whole model's forward pass over these blocks: embedding rows → per block
    /// x += Wo · attention(RoPE(Wq·n), RoPE(Wk·n), Wv·n) with n = RMSNorm(x) (over the sliding
    /// window, with the sliding layers' RoPE base, in the layers that slide), then
    /// x += Wdown · (silu(Wgate·n) ⊙ Wup·n) with n = RMSNorm(x) → final norm → logits.
    static func forward(_ blocks: [DecoderBlock], embedding: Matrix, unembedding: Unembedding, ropeFactors: [Float]?,
                        configuration c: ModelConfiguration, tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual, normed = state.normed
        let project = { (projection: Projection, input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>) in
            projection.apply(input, into: output, count: count, state: state)
        }
        Operations.embed(tokens, from: embedding, into: x, width: dimension)
        Operations.prepareRoPE(positions: state.rowPositions, configuration: c, base: c.ropeFrequencyBase, factors: ropeFactors,
                               cosines: state.ropeCosines, sines: state.ropeSines)
        let slidingBase = c.slidingRopeFrequencyBase
        if let slidingBase {
            Operations.prepareRoPE(positions: state.rowPositions, configuration: c, base: slidingBase, factors: ropeFactors,
                                   cosines: state.slidingRopeCosines, sines: state.slidingRopeSines)
        }
        for (layer, block) in blocks.enumerated() {
            let slides = c.slides(layer: layer), ownBase = slides && slidingBase != nil
            Operations.rmsNorm(x, weights: block.attentionNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            project(block.query, normed, state.query)
            project(block.key, normed, state.key)
            project(block.value, normed, state.value)
            if let norm = block.queryNorm {
                Operations.rmsNorm(state.query, weights: norm, epsilon: c.rmsEpsilon, into: state.query, count: count * c.headCount, width: c.headDimension)
            }
            if let norm = block.keyNorm {
                Operations.rmsNorm(state.key, weights: norm, epsilon: c.rmsEpsilon, into: state.key, count: count * c.headCountKV, width: c.headDimension)
            }
            Operations.ropeAndCache(state: state, layer: layer, count: count, configuration: c,
                                    cosines: ownBase ? state.slidingRopeCosines : state.ropeCosines,
                                    sines: ownBase ? state.slidingRopeSines : state.ropeSines, rotates: c.rotates(layer: layer))
            Operations.attention(state: state, layer: layer, count: count, configuration: c, window: slides ? c.slidingWindow : nil,
                                 sinks: block.sinks)
            project(block.attentionOutput, state.attended, normed)
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            block.feedForward.addResidual(to: x, norm: block.feedForwardNorm, layer: layer, count: count, configuration: c, state: state)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
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

    /// Reads the embedding, output and final norm, and `block(layer)` for each layer.
    init(weights: WeightLoader, ropeFactors: TensorName? = nil, longRopeFactors: TensorName? = nil,
         block: (Int) throws(ModelError) -> DecoderBlock) throws(ModelError) {
        configuration = weights.configuration
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [DecoderBlock] = []
        for index in 0..<configuration.blockCount { blocks.append(try block(index)) }
        self.blocks = blocks
        outputNorm = try weights.vector(.outputNorm)
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
}

/// An architecture whose model is a `DecoderModel`: its matrices and forward pass come from it.
protocol DecoderArchitecture: ModelArchitecture {
    var decoder: DecoderModel { get }
}

extension DecoderArchitecture {
    var matrices: [Matrix] { decoder.blocks.flatMap(\.matrices) + [decoder.output.matrix] }
    var tokenEmbedding: Matrix { decoder.tokenEmbedding }
    var unembedding: Unembedding { Unembedding(norm: decoder.outputNorm, output: decoder.output) }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        DecoderBlock.forward(decoder.blocks, embedding: decoder.tokenEmbedding, unembedding: unembedding,
                             ropeFactors: decoder.ropeFactors(forContext: state.contextLength), configuration: decoder.configuration,
                             tokens: tokens, state: state, allLogits: allLogits)
    }
}
