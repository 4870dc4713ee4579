import GGUF

/// Gemma 4's experts beside a layer's dense feed-forward (26B-A4B): routed on the residual's RMS
/// norm times the router's per-input scales / √dim, fed their own norm of the residual; the dense
/// output and the experts' are each normed, then added.
struct ExpertsBesideDense: Sendable {
    let experts: MixtureOfExperts
    /// The router's input scales (`ffn_gate_inp.scale`) divided by √dim.
    let routerScales: [Float]
    /// The norm of the experts' input (`pre_ffw_norm_2`), of the dense feed-forward's output
    /// (`post_ffw_norm_1`) and of the experts' (`post_ffw_norm_2`).
    let inputNorm, densePostNorm, postNorm: [Float]

    /// The experts of layer `index` under llama.cpp's names, of the shape `experts`.
    static func load(layer index: Int, from weights: WeightLoader, experts: ModelConfiguration.Experts) throws(ModelError) -> ExpertsBesideDense {
        let width = weights.configuration.embeddingLength
        return ExpertsBesideDense(
            experts: try MixtureOfExperts.load(layer: index, from: weights, experts: experts, variant: .gemma4),
            routerScales: try weights.scaleVector(.router, layer: index, length: width).map { $0 / Float(width).squareRoot() },
            inputNorm: try weights.vector(.expertsNorm, layer: index),
            densePostNorm: try weights.vector(.denseFeedForwardPostNorm, layer: index),
            postNorm: try weights.vector(.expertsPostNorm, layer: index))
    }

    /// Adds the experts' normed output on the residual rows `x` to the dense feed-forward's
    /// output in `dense` (normed first), through the state's `branch` and `routerInput`.
    func add(to dense: UnsafeMutablePointer<Float>, residual x: UnsafeMutablePointer<Float>, count: Int,
             configuration c: ModelConfiguration, state: InferenceState) {
        let width = c.embeddingLength, input = state.branch
        Operations.rmsNorm(dense, weights: densePostNorm, epsilon: c.rmsEpsilon, into: dense, count: count, width: width)
        Operations.rmsNorm(x, weights: inputNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
        Operations.rmsNorm(x, weights: routerScales, epsilon: c.rmsEpsilon, into: state.routerInput, count: count, width: width)
        experts.apply(input, routerInput: state.routerInput, into: input, count: count, state: state)
        Operations.rmsNorm(input, weights: postNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
        Operations.add(input, to: dense, count: count * width)
    }
}
