import GGUF

/// Gemma 4 (`gemma4`): Gemma 3's decoder (`DecoderBlock.gemma`) whose sliding-window layers (the file's pattern) have
/// their own head width, rotated dimensions and RoPE base, whose full layers may have fewer
/// key/value heads and values that are their keys; attention scores unscaled (the query and key
/// norms scale them), values normed, per-layer embeddings (E2B, E4B), the last layers attending
/// over earlier layers' keys and values, experts beside the dense feed-forward (26B-A4B), and
/// softcapped logits.
struct Gemma4Architecture: DecoderArchitecture {
    static let name = "gemma4"

    /// What Gemma 4 alone reads from the file, beside the shape every model has
    /// (`ModelConfiguration`).
    struct Configuration: Sendable {
        /// Width of each layer's own token embedding (`embedding_length_per_layer_input`), 0 for none.
        let perLayerEmbeddingLength: Int
        /// Logits become `cap · tanh(logits / cap)` (`final_logit_softcapping`), when the file says.
        let finalLogitSoftcapping: Float?

        /// Reads it from `gguf`, whose shape `c` is.
        init(gguf: GGUFFile, shape c: ModelConfiguration) throws(ModelError) {
            let prefix = Gemma4Architecture.name + "."
            perLayerEmbeddingLength = try c.integer("embedding_length_per_layer_input", in: gguf, minimum: 0)
            if let cap = gguf.metadata[prefix + "final_logit_softcapping"]?.doubleValue, cap != 0 {
                guard cap > 0, cap.isFinite else {
                    throw ModelError(file: gguf.path, field: prefix + "final_logit_softcapping", reason: "\(cap) is not a positive number")
                }
                finalLogitSoftcapping = Float(cap)
            } else {
                finalLogitSoftcapping = nil
            }
        }
    }

    static func configure(_ c: inout ModelConfiguration, gguf: GGUFFile) throws(ModelError) {
        let prefix = name + "."
        c.ropeStyle = .halves
        c.attentionScale = 1
        try c.readSlidingWindowPattern(gguf: gguf, defaultPeriod: 6)
        c.slidingRopeFrequencyBase = Float(gguf.metadata[prefix + "rope.freq_base_swa"]?.doubleValue ?? Double(c.ropeFrequencyBase))
        let headWidth = try c.integer("attention.key_length_swa", in: gguf, minimum: 0)
        let rotated = gguf.metadata[prefix + "rope.dimension_count_swa"] == nil ? c.ropeDimensionCount : try c.integer("rope.dimension_count_swa", in: gguf, minimum: 0)
        guard headWidth > 0, headWidth % 2 == 0, rotated <= headWidth, rotated % 2 == 0 else {
            throw ModelError(file: gguf.path, field: prefix + "attention.key_length_swa", reason: "sliding heads of \(headWidth) cannot rotate \(rotated) dimensions")
        }
        for layer in c.layerShapes.indices where c.slides(layer: layer) {
            c.layerShapes[layer].headDimension = headWidth
            c.layerShapes[layer].ropeDimensionCount = rotated
        }
        c.experts?.besideDense = true
        let shared = gguf.metadata[prefix + "attention.shared_kv_layers"] == nil ? 0 : try c.integer("attention.shared_kv_layers", in: gguf, minimum: 0)
        guard shared > 0 else { return }
        // The shared layers read the last sliding and the last full layer before them (llama.cpp's
        // `n_layer_kv_from_start - 2` or `- 1`).
        let first = c.blockCount - shared
        guard first >= 2, c.slides(layer: first - 2), !c.slides(layer: first - 1) else {
            throw ModelError(file: gguf.path, field: prefix + "attention.shared_kv_layers",
                             reason: "\(shared) shared layers of \(c.blockCount) need a sliding then a full layer before them")
        }
        for layer in first..<c.blockCount { c.layerShapes[layer].cacheLayer = first - (c.slides(layer: layer) ? 2 : 1) }
    }

    let configuration: Configuration
    let decoder: DecoderModel

    init(weights: WeightLoader) throws(ModelError) {
        let own = try Configuration(gguf: weights.gguf, shape: weights.configuration)
        configuration = own
        decoder = try DecoderModel(weights: weights, ropeFactors: .ropeFrequencies, slidingRopeFactors: false, scalesEmbedding: true,
                                   perLayerInputWidth: own.perLayerEmbeddingLength, logitSoftcap: own.finalLogitSoftcapping) {
            (layer: Int) throws(ModelError) in
            try DecoderBlock.gemma(layer: layer, from: weights, extras: .scale, valueNorm: true,
                                   perLayerInputWidth: own.perLayerEmbeddingLength)
        }
    }

    var details: [(name: String, value: String)] {
        var lines: [(name: String, value: String)] = []
        if configuration.perLayerEmbeddingLength > 0 { lines.append(("per-layer embeddings", "\(configuration.perLayerEmbeddingLength) a layer")) }
        if let cap = configuration.finalLogitSoftcapping { lines.append(("logit softcapping", String(cap))) }
        return lines
    }
}
