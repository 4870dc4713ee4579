import GGUF

/// Phi-3 (`phi3`): LLaMA's block with the Q/K/V products fused in one matrix (`attn_qkv`, or
/// three) and the gate and up products fused in another (`ffn_up`, gate rows first), RoPE on
/// halves, and the RoPE factors the file has: the short ones (`rope_factors_short`), or the long
/// ones (`rope_factors_long`) in a session longer than the trained context.
struct Phi3Architecture: DecoderArchitecture {
    static let name = "phi3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        let c = weights.configuration
        decoder = try DecoderModel(weights: weights, ropeFactors: .ropeFactorsShort, longRopeFactors: .ropeFactorsLong) { (index: Int) throws(ModelError) in
            // Its llama.cpp graph gives the feed-forward neither scales nor biases.
            let gateUp = try weights.projection(.up, layer: index, columns: c.embeddingLength, rows: 2 * c.feedForwardLength, applies: [])
            return DecoderBlock(
                mixerNorm: try weights.vector(.attentionNorm, layer: index),
                feedForwardNorm: try weights.vector(.feedForwardNorm, layer: index),
                mixer: try SelfAttention.load(layer: index, from: weights),
                feedForward: FeedForward.dense(gate: gateUp.rows(0..<c.feedForwardLength),
                                    up: gateUp.rows(c.feedForwardLength..<(2 * c.feedForwardLength)),
                                    down: try weights.projection(.down, layer: index, columns: c.feedForwardLength, rows: c.embeddingLength, applies: [])))
        }
    }
}
