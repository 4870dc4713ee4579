/// LLaMA (`llama`), which also covers Llama 3 (per-dimension RoPE factors in `rope_freqs`),
/// Mistral-style files and SmolLM: pre-norm blocks of grouped-query attention with RoPE on
/// adjacent pairs and a SwiGLU feed-forward.
struct LlamaArchitecture: ModelArchitecture {
    static let name = "llama"

    static func configure(_ configuration: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        configuration.ropeStyle = .adjacent
    }

    let configuration: ModelConfiguration
    let tokenEmbedding: Matrix
    let blocks: [DecoderBlock]
    let outputNorm: [Float]
    let output: Matrix
    /// Llama 3's frequency factors, one per RoPE pair.
    let ropeFactors: [Float]?

    init(weights: WeightLoader) throws(ModelError) {
        configuration = weights.configuration
        (tokenEmbedding, output) = try weights.embeddingAndOutput()
        var blocks: [DecoderBlock] = []
        for index in 0..<configuration.blockCount { blocks.append(try DecoderBlock.load(layer: index, from: weights)) }
        self.blocks = blocks
        outputNorm = try weights.vector("output_norm.weight")
        ropeFactors = weights.has("rope_freqs.weight") ? try weights.vector("rope_freqs.weight", length: configuration.ropeDimensionCount / 2) : nil
    }

    var matrices: [Matrix] { blocks.flatMap(\.matrices) + [output] }

    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool) {
        DecoderBlock.forward(blocks, embedding: tokenEmbedding, outputNorm: outputNorm, output: output, ropeFactors: ropeFactors,
                             configuration: configuration, tokens: tokens, state: state, allLogits: allLogits)
    }
}
