/// Qwen 3 (`qwen3`): LLaMA's block with per-head RMSNorm of queries and keys before RoPE on
/// halves, a head width of its own (`attention.key_length`) and, in small models, a tied output.
struct Qwen3Architecture: ModelArchitecture {
    static let name = "qwen3"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .halves
    }

    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [DecoderBlock]
    let outputNorm: [Float]
    let output: Matrix

    init(weights: WeightLoader) throws(ModelError) {
        configuration = weights.configuration
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [DecoderBlock] = []
        for index in 0..<configuration.blockCount { blocks.append(try DecoderBlock.load(layer: index, from: weights, queryKeyNorms: true)) }
        self.blocks = blocks
        outputNorm = try weights.vector("output_norm.weight")
    }

    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [output] }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        DecoderBlock.forward(blocks, embedding: tokenEmbedding, outputNorm: outputNorm, output: output, ropeFactors: nil,
                             configuration: configuration, tokens: tokens, state: state, allLogits: allLogits)
    }
}
