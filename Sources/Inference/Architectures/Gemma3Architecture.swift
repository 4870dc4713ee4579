import GGUF

/// Gemma 3 (`gemma3`): embeddings scaled by √dim, RMSNorm before and after both attention and
/// feed-forward, per-head RMSNorm of queries and keys before RoPE (halves pairing), a GELU-gated
/// feed-forward, and five sliding-window layers (RoPE base 10,000) for every global one (or the
/// layers the file's pattern names).
struct Gemma3Architecture: ModelArchitecture {
    static let name = "gemma3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
        try configuration.readSlidingWindowPattern(gguf: gguf, defaultPeriod: 6)
        configuration.slidingRopeFrequencyBase = Float(gguf.metadata["gemma3.rope.freq_base_swa"]?.doubleValue ?? 10_000)
        // Linear scaling by a factor of 0 or 1 (llama.cpp's "none") changes nothing.
        let factor = gguf.metadata["gemma3.rope.scaling.factor"]?.doubleValue ?? 0
        if let type = gguf.metadata["gemma3.rope.scaling.type"]?.stringValue, type != "none", !(type == "linear" && (factor == 0 || factor == 1)) {
            throw ModelError(file: gguf.path, field: "gemma3.rope.scaling.type", reason: "RoPE scaling \"\(type)\" (factor \(factor)) is not supported yet")
        }
    }

    struct Block: Sendable {
        let attentionNorm, queryNorm, keyNorm, attentionPostNorm: [Float]
        let query, key, value, attentionOutput: Projection
        let feedForwardNorm, feedForwardPostNorm: [Float]
        let gate, up, down: Projection
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
            blocks.append(Block(
                attentionNorm: try weights.vector(.attentionNorm, layer: index),
                queryNorm: try weights.vector(.queryNorm, layer: index, length: c.headDimension),
                keyNorm: try weights.vector(.keyNorm, layer: index, length: c.headDimension),
                attentionPostNorm: try weights.vector(.attentionPostNorm, layer: index),
                query: try weights.projection(.query, layer: index, columns: c.embeddingLength, rows: c.queryDimension),
                key: try weights.projection(.key, layer: index, columns: c.embeddingLength, rows: c.kvDimension),
                value: try weights.projection(.value, layer: index, columns: c.embeddingLength, rows: c.kvDimension),
                attentionOutput: try weights.projection(.attentionOutput, layer: index, columns: c.queryDimension, rows: c.embeddingLength, applies: .scale),
                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index),
                feedForwardPostNorm: try weights.vector(.feedForwardPostNorm, layer: index),
                gate: try weights.projection(.gate, layer: index, columns: c.embeddingLength, rows: c.feedForwardLength, applies: []),
                up: try weights.projection(.up, layer: index, columns: c.embeddingLength, rows: c.feedForwardLength, applies: []),
                down: try weights.projection(.down, layer: index, columns: c.feedForwardLength, rows: c.embeddingLength, applies: [])
            ))
        }
        self.blocks = blocks
        outputNorm = try weights.vector(.outputNorm)
    }

    var matrices: [Matrix] {
        blocks.flatMap { [$0.query, $0.key, $0.value, $0.attentionOutput, $0.gate, $0.up, $0.down].map(\.matrix) } + [output.matrix]
    }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        let c = configuration
        let count = tokens.count, dimension = c.embeddingLength
        let x = state.residual, normed = state.normed
        let multiply = { (projection: Projection, input: UnsafeMutablePointer<Float>, output: UnsafeMutablePointer<Float>) in
            projection.apply(input, into: output, count: count, state: state)
        }
        Operations.embed(tokens, from: tokenEmbedding, into: x, width: dimension)
        Operations.scale(x, by: Float(dimension).squareRoot(), count: count * dimension)
        Operations.prepareRoPE(state: state, configuration: c)
        for (layer, block) in blocks.enumerated() {
            let slides = c.slides(layer: layer)
            // Attention: x += PostNorm(Wo · attention(RoPE(QNorm(Wq·n)), RoPE(KNorm(Wk·n)), Wv·n)), n = RMSNorm(x).
            Operations.rmsNorm(x, weights: block.attentionNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            multiply(block.query, normed, state.query)
            multiply(block.key, normed, state.key)
            multiply(block.value, normed, state.value)
            Operations.rmsNorm(state.query, weights: block.queryNorm, epsilon: c.rmsEpsilon, into: state.query,
                               count: count * c.headCount, width: c.headDimension)
            Operations.rmsNorm(state.key, weights: block.keyNorm, epsilon: c.rmsEpsilon, into: state.key,
                               count: count * c.headCountKV, width: c.headDimension)
            Operations.ropeAndCache(state: state, layer: layer, count: count, configuration: c,
                                    cosines: slides ? state.slidingRopeCosines : state.ropeCosines,
                                    sines: slides ? state.slidingRopeSines : state.ropeSines)
            Operations.attention(state: state, layer: layer, count: count, configuration: c, window: slides ? c.slidingWindow : nil)
            multiply(block.attentionOutput, state.attended, normed)
            Operations.rmsNorm(normed, weights: block.attentionPostNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            state.visit(.attentionOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            // Feed-forward: x += PostNorm(Wdown · (gelu(Wgate·n) ⊙ Wup·n)), n = RMSNorm(x).
            Operations.rmsNorm(x, weights: block.feedForwardNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            multiply(block.gate, normed, state.gate)
            multiply(block.up, normed, state.up)
            Operations.geGLU(state.gate, state.up, count: count * c.feedForwardLength, pool: state.pool)
            multiply(block.down, state.gate, normed)
            Operations.rmsNorm(normed, weights: block.feedForwardPostNorm, epsilon: c.rmsEpsilon, into: normed, count: count, width: dimension)
            state.visit(.feedForwardOutput, layer: layer, rows: normed, count: count, width: dimension)
            Operations.add(normed, to: x, count: count * dimension)
            state.visit(.blockOutput, layer: layer, rows: x, count: count, width: dimension)
        }
        let first = allLogits ? 0 : count - 1
        unembedding.apply(x + first * dimension, count: count - first, configuration: c, state: state)
    }
}
