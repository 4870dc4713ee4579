/// Phi-3 (`phi3`): LLaMA's block with the Q/K/V products fused in one matrix (`attn_qkv`) and the
/// gate and up products fused in another (`ffn_up`, gate rows first), RoPE on halves, and the
/// short RoPE factors (`rope_factors_short`) when the file has them.
struct Phi3Architecture: ModelArchitecture {
    static let name = "phi3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [DecoderBlock]
    let outputNorm: [Float]
    let output: Matrix
    let ropeFactors: [Float]?

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        configuration = c
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [DecoderBlock] = []
        for index in 0..<c.blockCount {
            let prefix = "blk.\(index)."
            // The fused matrices are viewed as their parts, rows in the order llama.cpp splits them.
            let qkv = try weights.matrix(prefix + "attn_qkv.weight", columns: c.embeddingLength, rows: c.queryDimension + 2 * c.kvDimension)
            let gateUp = try weights.matrix(prefix + "ffn_up.weight", columns: c.embeddingLength, rows: 2 * c.feedForwardLength)
            blocks.append(DecoderBlock(
                attentionNorm: try weights.vector(prefix + "attn_norm.weight"),
                query: qkv.rows(0..<c.queryDimension),
                key: qkv.rows(c.queryDimension..<(c.queryDimension + c.kvDimension)),
                value: qkv.rows((c.queryDimension + c.kvDimension)..<(c.queryDimension + 2 * c.kvDimension)),
                attentionOutput: try weights.matrix(prefix + "attn_output.weight", columns: c.queryDimension, rows: c.embeddingLength),
                feedForwardNorm: try weights.vector(prefix + "ffn_norm.weight"),
                gate: gateUp.rows(0..<c.feedForwardLength),
                up: gateUp.rows(c.feedForwardLength..<(2 * c.feedForwardLength)),
                down: try weights.matrix(prefix + "ffn_down.weight", columns: c.feedForwardLength, rows: c.embeddingLength)))
        }
        self.blocks = blocks
        outputNorm = try weights.vector("output_norm.weight")
        ropeFactors = weights.has("rope_factors_short.weight")
            ? try weights.vector("rope_factors_short.weight", length: c.ropeDimensionCount / 2) : nil
    }

    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [output] }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        DecoderBlock.forward(blocks, embedding: tokenEmbedding, outputNorm: outputNorm, output: output, ropeFactors: ropeFactors,
                             configuration: configuration, tokens: tokens, state: state, allLogits: allLogits)
    }
}
