import GGUF

extension DecoderBlock {
    /// A Gemma 3 or Gemma 4 block of layer `index` under llama.cpp's names: attention with
    /// per-head query and key norms and a norm after it (`post_attention_norm`), a GELU-gated
    /// feed-forward with a norm after it (`post_ffw_norm`) applying the products' `extras`; with
    /// `valueNorm` (Gemma 4), values normed without weights and equal to the keys where the file
    /// has no value matrix, the experts the configuration has beside the dense feed-forward
    /// (`Experts.besideDense`), a per-layer input `perLayerInputWidth` wide when it is not 0, and the output scale the file has.
    static func gemma(layer index: Int, from weights: WeightLoader, extras: Projection.Extras, valueNorm: Bool,
                      perLayerInputWidth: Int = 0) throws(ModelError) -> DecoderBlock {
        let c = weights.configuration
        let feedForward = try FeedForward.loadDense(layer: index, from: weights, extras: extras, activation: .geGLU)
        let feedForwardNorm = try weights.vector(.feedForwardNorm, layer: index)
        let postNorm = try weights.vector(.feedForwardPostNorm, layer: index)
        let feedForwardBranch = if let experts = c.experts, experts.besideDense {
            ResidualBranch.feedForward(norm: nil, try DenseBesideExperts.load(layer: index, from: weights, dense: feedForward, norm: feedForwardNorm, experts: experts),
                                       postNorm: postNorm)
        } else {
            ResidualBranch.feedForward(norm: feedForwardNorm, feedForward, postNorm: postNorm)
        }
        var stages: [any BlockStage] = [
            ResidualBranch.mixer(norm: try weights.vector(.attentionNorm, layer: index),
                                 try SelfAttention.load(layer: index, from: weights, queryKeyNorms: true, valueNorm: valueNorm, valuesMayBeKeys: valueNorm),
                                 postNorm: try weights.vector(.attentionPostNorm, layer: index)),
            feedForwardBranch,
        ]
        if perLayerInputWidth > 0 { stages.append(try PerLayerEmbeddings.LayerInput.load(layer: index, from: weights, width: perLayerInputWidth)) }
        if weights.has(.layerOutputScale, layer: index) { stages.append(OutputScale(scale: try weights.vector(.layerOutputScale, layer: index, length: 1)[0])) }
        return DecoderBlock(stages: stages)
    }
}
