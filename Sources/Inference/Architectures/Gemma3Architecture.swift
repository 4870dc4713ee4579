import GGUF

/// Gemma 3 (`gemma3`): embeddings scaled by √dim, blocks of `DecoderBlock.gemma` (query and key
/// norms, norms after attention and after the GELU-gated feed-forward), and five sliding-window
/// layers (RoPE base 10,000) for every global one (or the layers the file's pattern names).
struct Gemma3Architecture: DecoderArchitecture {
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

    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        decoder = try DecoderModel(weights: weights, scalesEmbedding: true) { (layer: Int) throws(ModelError) in
            try DecoderBlock.gemma(layer: layer, from: weights, extras: [], valueNorm: false)
        }
    }
}
