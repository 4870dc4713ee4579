import Foundation
import GGUF

/// The Gemma 3 and Gemma 4 decoder (llama.cpp's `gemma3.cpp`, `gemma4.cpp`): embeddings scaled by
/// √dim; each block norms its input and its output around both attention (per-head query and key
/// norms, sliding-window layers) and a GELU-gated feed-forward. Gemma 4 adds what its file has:
/// values normed without weights, experts beside the dense feed-forward, per-layer embeddings
/// gated into the residual stream after each block, a per-layer output scale, RoPE factors for
/// the full layers, layers sharing keys and values, and softcapped logits (the last two in the
/// configuration).
struct GemmaDecoder: DecoderPass {
    /// Gemma 4's experts beside a layer's dense feed-forward: routed on the residual's RMS norm
    /// scaled by the router's per-input scales / √dim, fed its own norm of the residual, each
    /// output normed and the two added.
    struct ExpertsBranch: Sendable {
        let experts: MixtureOfExperts
        /// The router's input scales (`ffn_gate_inp.scale`) divided by √dim.
        let routerScales: [Float]
        /// The norm of the experts' input (`pre_ffw_norm_2`), of the dense feed-forward's output
        /// (`post_ffw_norm_1`) and of the experts' (`post_ffw_norm_2`).
        let inputNorm, densePostNorm, postNorm: [Float]

        /// Adds the experts' normed output on the residual rows `x` to the dense feed-forward's
        /// output in `dense` (normed first), through the state's `branch` and `routerInput`.
        func add(to dense: UnsafeMutablePointer<Float>, residual x: UnsafeMutablePointer<Float>, count: Int,
                 configuration c: ModelConfiguration, state: InferenceState) {
            let width = c.embeddingLength, input = state.branch
            Operations.rmsNorm(dense, weights: densePostNorm, epsilon: c.rmsEpsilon, into: dense, count: count, width: width)
            Operations.rmsNorm(x, weights: inputNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
            Operations.rmsNorm(x, weights: routerScales, epsilon: c.rmsEpsilon, into: state.routerInput, count: count, width: width)
            experts.apply(input, routerInput: state.routerInput, into: input, count: count, state: state)
            Operations.rmsNorm(input, weights: postNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
            Operations.add(input, to: dense, count: count * width)
        }
    }

    /// Gemma 4's per-layer embeddings: every layer's own embedding of each token (a row of the
    /// table holds all layers' side by side), mixed with a product of the token's scaled
    /// embedding (`project_per_layer_inputs`).
    struct PerLayerEmbeddings: Sendable {
        let table: Matrix
        let projection: Projection
        let norm: [Float]

        /// Writes each token's per-layer inputs into `state.perLayerInputs`:
        /// (RMSNorm(W·x / √dim), per layer) + table row · √width) / √2, for the embedded rows `x`.
        func prepare(_ tokens: [Int32], embedded x: UnsafeMutablePointer<Float>, configuration c: ModelConfiguration, state: InferenceState) {
            let width = c.perLayerEmbeddingLength, rowWidth = width * c.blockCount, count = tokens.count
            let inputs = state.perLayerInputs, tableRow = inputs + state.batchCapacity * rowWidth
            projection.apply(x, into: inputs, count: count, state: state)
            Operations.scale(inputs, by: 1 / Float(c.embeddingLength).squareRoot(), count: count * rowWidth)
            Operations.rmsNorm(inputs, weights: norm, epsilon: c.rmsEpsilon, into: inputs, count: count * c.blockCount, width: width)
            let tableScale = Float(width).squareRoot(), mixScale = 1 / Float(2).squareRoot()
            for (index, token) in tokens.enumerated() {
                table.dequantize(row: Int(token), into: tableRow)
                let row = inputs + index * rowWidth
                for offset in 0..<rowWidth { row[offset] = (row[offset] + tableRow[offset] * tableScale) * mixScale }
            }
        }
    }

    /// A Gemma 4 layer's use of its per-layer input: x += RMSNorm(proj · (gelu(gate · x) ⊙ input)).
    struct PerLayerInput: Sendable {
        let gate, projection: Projection
        let postNorm: [Float]

        func add(to x: UnsafeMutablePointer<Float>, layer: Int, count: Int, configuration c: ModelConfiguration, state: InferenceState) {
            let width = c.perLayerEmbeddingLength, rowWidth = width * c.blockCount, dimension = c.embeddingLength
            gate.apply(x, into: state.gate, count: count, state: state)
            for row in 0..<count {
                (state.up + row * width).update(from: state.perLayerInputs + row * rowWidth + layer * width, count: width)
            }
            Operations.geGLU(state.gate, state.up, count: count * width, pool: state.pool)
            projection.apply(state.gate, into: state.normed, count: count, state: state)
            Operations.rmsNorm(state.normed, weights: postNorm, epsilon: c.rmsEpsilon, into: state.normed, count: count, width: dimension)
            Operations.add(state.normed, to: x, count: count * dimension)
        }
    }

    struct Block: Sendable {
        let attentionNorm, attentionPostNorm: [Float]
        let attention: SelfAttention
        let feedForwardNorm, feedForwardPostNorm: [Float]
        let feedForward: FeedForward
        let experts: ExpertsBranch?
        let perLayerInput: PerLayerInput?
        /// What the block's output is multiplied by (`layer_output_scale`), when the file says.
        let outputScale: Float?
    }

    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [Block]
    let outputNorm: [Float]
    let output: Projection
    let perLayerEmbeddings: PerLayerEmbeddings?
    /// The full layers' RoPE factors (`rope_freqs`, Gemma 4's proportional RoPE), when the file has them.
    let ropeFactors: [Float]?

    /// Reads a Gemma model: the weights' `extras` (scales) each product applies, and `valueNorm`
    /// for Gemma 4's unweighted value norm (its values may also be its keys, and its weights
    /// scaled); the rest as the file has it.
    init(weights: WeightLoader, extras: Projection.Extras, valueNorm: Bool) throws(ModelError) {
        let c = weights.configuration
        configuration = c
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [Block] = []
        for index in 0..<c.blockCount {
            var experts: ExpertsBranch?
            if let shape = c.experts, c.denseBesideExperts {
                experts = ExpertsBranch(
                    experts: try MixtureOfExperts.load(layer: index, from: weights, experts: shape, variant: .gemma4),
                    routerScales: try weights.scaleVector(.router, layer: index, length: c.embeddingLength).map { $0 / Float(c.embeddingLength).squareRoot() },
                    inputNorm: try weights.vector(.expertsNorm, layer: index),
                    densePostNorm: try weights.vector(.denseFeedForwardPostNorm, layer: index),
                    postNorm: try weights.vector(.expertsPostNorm, layer: index))
            }
            var perLayerInput: PerLayerInput?
            if c.perLayerEmbeddingLength > 0 {
                perLayerInput = PerLayerInput(
                    gate: try weights.projection(.perLayerInputGate, layer: index, columns: c.embeddingLength, rows: c.perLayerEmbeddingLength, applies: []),
                    projection: try weights.projection(.perLayerProjection, layer: index, columns: c.perLayerEmbeddingLength, rows: c.embeddingLength, applies: []),
                    postNorm: try weights.vector(.perLayerPostNorm, layer: index))
            }
            blocks.append(Block(
                attentionNorm: try weights.vector(.attentionNorm, layer: index),
                attentionPostNorm: try weights.vector(.attentionPostNorm, layer: index),
                attention: try SelfAttention.load(layer: index, from: weights, queryKeyNorms: true, valueNorm: valueNorm, valuesMayBeKeys: valueNorm),
                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index),
                feedForwardPostNorm: try weights.vector(.feedForwardPostNorm, layer: index),
                feedForward: try FeedForward.loadDense(layer: index, from: weights, extras: extras, activation: .geGLU),
                experts: experts,
                perLayerInput: perLayerInput,
                outputScale: weights.has(.layerOutputScale, layer: index) ? try weights.vector(.layerOutputScale, layer: index, length: 1)[0] : nil))
        }
        self.blocks = blocks
        outputNorm = try weights.vector(.outputNorm)
        if c.perLayerEmbeddingLength > 0 {
            let width = c.perLayerEmbeddingLength * c.blockCount
            perLayerEmbeddings = PerLayerEmbeddings(
                table: try weights.matrix(.perLayerTokenEmbedding, columns: width, rows: c.vocabularySize, multiplied: false),
                projection: try weights.projection(.perLayerModelProjection, columns: c.embeddingLength, rows: width, applies: []),
                norm: try weights.vector(.perLayerProjectionNorm, length: c.perLayerEmbeddingLength))
        } else {
            perLayerEmbeddings = nil
        }
        ropeFactors = weights.has(.ropeFrequencies) ? try weights.vector(.ropeFrequencies, length: c.ropeDimensionCount / 2) : nil
    }

    var unembedding: Unembedding { Unembedding(norm: outputNorm, output: output) }

    var matrices: [Matrix] {
        blocks.flatMap { block in
            block.attention.matrices + block.feedForward.matrices + (block.experts?.experts.matrices ?? [])
                + [block.perLayerInput?.gate.matrix, block.perLayerInput?.projection.matrix].compactMap { $0 }
        } + [perLayerEmbeddings?.projection.matrix, output.matrix].compactMap { $0 }
    }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let c = configuration
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual, normed = state.normed
        Operations.embed(tokens, from: tokenEmbedding, into: x, width: dimension)
        Operations.scale(x, by: Float(dimension).squareRoot(), count: count * dimension)
        perLayerEmbeddings?.prepare(tokens, embedded: x, configuration: c, state: state)
        Operations.prepareRoPE(state: state, configuration: c, factors: ropeFactors, slidingFactors: false)
        for (layer, block) in blocks.enumerated() {
            // Attention: x += PostNorm(attention(RMSNorm(x))).
            Operations.rmsNorm(x, weights: block.attentionNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            block.attention.apply(normed, into: normed, count: count, layer: layer, configuration: c, state: state)
            Operations.rmsNorm(normed, weights: block.attentionPostNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            // Feed-forward: x += PostNorm(FFN(RMSNorm(x)) [+ the experts' branch]).
            Operations.rmsNorm(x, weights: block.feedForwardNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            block.feedForward.apply(normed, into: normed, count: count, state: state)
            block.experts?.add(to: normed, residual: x, count: count, configuration: c, state: state)
            Operations.rmsNorm(normed, weights: block.feedForwardPostNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            state.visit(.feedForwardOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            block.perLayerInput?.add(to: x, layer: layer, count: count, configuration: c, state: state)
            if let scale = block.outputScale { Operations.scale(x, by: scale, count: count * dimension) }
            state.visit(.blockOutput, layer: layer, rows: x, count: count, width: dimension)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
}
