import CPUBackend
import GGUF

/// A decoder block: its stages in order over the residual stream (`BlockStage`). Most are the
/// pre-norm block LLaMA made common, x += mixer(RMSNorm(x)) then x += feed-forward(RMSNorm(x))
/// (`init(mixerNorm:feedForwardNorm:mixer:feedForward:)`), whose mixer is attention in most
/// architectures (`load`) and a recurrent layer or gated attention in the hybrid ones; Gemma's
/// (`gemma`) also norm each branch's output and may add a per-layer input and an output scale;
/// OLMo 2's norm only the outputs.
struct DecoderBlock: Sendable {
    let stages: [any BlockStage]

    init(stages: [any BlockStage]) {
        self.stages = stages
    }

    /// The pre-norm block: a mixer and a feed-forward, each after its norm.
    init(mixerNorm: [Float], feedForwardNorm: [Float], mixer: any Sublayer, feedForward: any Sublayer) {
        stages = [ResidualBranch.mixer(norm: mixerNorm, mixer), ResidualBranch.feedForward(norm: feedForwardNorm, feedForward)]
    }

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
    var matrices: [Matrix] { stages.flatMap(\.matrices) }

    /// The scratch buffers its stages use.
    var scratch: [ScratchNeed] { stages.flatMap(\.scratch) }
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
    /// Whether the factors divide the sliding layers' frequencies too (not Gemma 4's).
    let slidingRopeFactors: Bool
    /// What the embedding rows are multiplied by (Gemma's √dim), when the architecture says.
    let embeddingScale: Float?
    /// Each layer's own token embeddings (Gemma 4's), when the architecture has them.
    let perLayerEmbeddings: PerLayerEmbeddings?
    /// The logits' softcapping (Gemma 4's), when the architecture has it.
    let logitSoftcap: Float?

    /// Reads the embedding, output and final norm (`outputNorm`), the RoPE factors the file has
    /// (dividing the sliding layers' frequencies unless `slidingRopeFactors` is false), per-layer
    /// embeddings `perLayerInputWidth` wide when it is not 0, and `block(layer)` for each layer;
    /// the embedding rows scaled by √dim with `scalesEmbedding` (Gemma's), the logits softcapped
    /// by `logitSoftcap`.
    init(weights: WeightLoader, outputNorm: TensorName = .outputNorm, ropeFactors: TensorName? = nil, longRopeFactors: TensorName? = nil,
         slidingRopeFactors: Bool = true, scalesEmbedding: Bool = false, perLayerInputWidth: Int = 0, logitSoftcap: Float? = nil,
         block: (Int) throws(ModelError) -> DecoderBlock) throws(ModelError) {
        configuration = weights.configuration
        self.slidingRopeFactors = slidingRopeFactors
        embeddingScale = scalesEmbedding ? Float(configuration.embeddingLength).squareRoot() : nil
        perLayerEmbeddings = perLayerInputWidth > 0 ? try PerLayerEmbeddings.load(from: weights, width: perLayerInputWidth) : nil
        self.logitSoftcap = logitSoftcap
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

    var unembedding: Unembedding { Unembedding(norm: outputNorm, output: output, softcap: logitSoftcap) }

    /// The scratch buffers its blocks and per-layer embeddings use.
    var scratch: [ScratchNeed] { blocks.flatMap(\.scratch) + (perLayerEmbeddings?.scratch ?? []) }

    /// Every matrix one generated token reads.
    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [perLayerEmbeddings?.projection.matrix, output.matrix].compactMap { $0 } }

    /// The forward pass, as `ModelArchitecture.forward`: embedding rows (scaled, and the per-layer
    /// inputs prepared, as the model says) → each block's stages in order (attention rotates with
    /// the session's RoPE factors) → final norm → logits. Hooks see every `ActivationPoint` in
    /// order; when one visits the final norm or the logits, every row is unembedded (the last
    /// row's logits still end first in `state.logits` unless `allLogits`).
    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let c = configuration
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual
        state.backend.embed(tokens, from: tokenEmbedding, into: x, width: dimension)
        for (adapters, rows) in state.adaptedRuns(count: count) {
            adapters.addEmbeddingProducts(Array(tokens[rows]), to: x + rows.lowerBound * dimension, state: state)
        }
        if let embeddingScale { state.backend.scale(x, by: embeddingScale, count: count * dimension) }
        state.visit(.embedding, layer: 0, rows: x, count: count, width: dimension)
        perLayerEmbeddings?.prepare(tokens, embedded: x, configuration: c, state: state)
        state.prepareRoPE(configuration: c, factors: ropeFactors(forContext: state.contextLength), slidingFactors: slidingRopeFactors)
        for (layer, block) in blocks.enumerated() {
            state.visit(.blockInput, layer: layer, rows: x, count: count, width: dimension)
            for stage in block.stages { stage.apply(to: x, count: count, layer: layer, configuration: c, state: state) }
            state.visit(.blockOutput, layer: layer, rows: x, count: count, width: dimension)
        }
        let everyRow = allLogits || state.hooksVisit(.finalNorm, layer: 0) || state.hooksVisit(.logits, layer: 0)
        let first = everyRow ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state, visiting: everyRow)
        if everyRow && !allLogits && count > 1 {
            let vocabulary = output.matrix.rows
            state.backend.copyRows(state.logits + (count - 1) * vocabulary, stride: vocabulary, into: state.logits, stride: vocabulary, width: vocabulary,
                                   count: 1)
        }
    }
}

/// An architecture whose model is a `DecoderModel`: its matrices and forward pass come from it.
protocol DecoderArchitecture: ModelArchitecture {
    var decoder: DecoderModel { get }
}

extension DecoderArchitecture {
    var matrices: [Matrix] { decoder.matrices }
    var scratch: [ScratchNeed] { decoder.scratch }
    var tokenEmbedding: Matrix { decoder.tokenEmbedding }
    var unembedding: Unembedding { decoder.unembedding }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        decoder.forward(tokens, state: state, allLogits: allLogits)
    }
}
