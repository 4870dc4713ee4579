import GGUF

/// Phi-3 (`phi3`): LLaMA's block with the Q/K/V products fused in one matrix (`attn_qkv`) and the
/// gate and up products fused in another (`ffn_up`, gate rows first), RoPE on halves, and the
/// short RoPE factors (`rope_factors_short`) when the file has them.
struct Phi3Architecture: DecoderArchitecture {
    static let name = "phi3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        decoder = try DecoderModel(weights: weights, ropeFactors: .ropeFactorsShort) { (index: Int) throws(ModelError) in
            // The fused matrices are viewed as their parts, rows in the order llama.cpp splits them.
            let qkv = try weights.projection(.queryKeyValue, layer: index, columns: c.embeddingLength, rows: c.queryDimension + 2 * c.kvDimension)
            // Its llama.cpp graph gives the feed-forward neither scales nor biases.
            let gateUp = try weights.projection(.up, layer: index, columns: c.embeddingLength, rows: 2 * c.feedForwardLength, applies: [])
            return DecoderBlock(
                attentionNorm: try weights.vector(.attentionNorm, layer: index),
                query: qkv.rows(0..<c.queryDimension),
                key: qkv.rows(c.queryDimension..<(c.queryDimension + c.kvDimension)),
                value: qkv.rows((c.queryDimension + c.kvDimension)..<(c.queryDimension + 2 * c.kvDimension)),
                attentionOutput: try weights.projection(.attentionOutput, layer: index, columns: c.queryDimension, rows: c.embeddingLength),
                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index),
                feedForward: .dense(gate: gateUp.rows(0..<c.feedForwardLength),
                                    up: gateUp.rows(c.feedForwardLength..<(2 * c.feedForwardLength)),
                                    down: try weights.projection(.down, layer: index, columns: c.feedForwardLength, rows: c.embeddingLength, applies: [])))
        }
    }
}
