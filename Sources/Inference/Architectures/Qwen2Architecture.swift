/// Qwen 2 and 2.5 (`qwen2`): LLaMA's block with biases on the Q/K/V products and RoPE on halves.
struct Qwen2Architecture: ModelArchitecture {
    static let name = "qwen2"

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
        for index in 0..<configuration.blockCount { blocks.append(try DecoderBlock.load(layer: index, from: weights, biases: true)) }
        self.blocks = blocks
        outputNorm = try weights.vector("output_norm.weight")
    }

    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [output] }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        DecoderBlock.forward(blocks, embedding: tokenEmbedding, outputNorm: outputNorm, output: output, ropeFactors: nil,
                             configuration: configuration, tokens: tokens, state: state, allLogits: allLogits)
    }
}
