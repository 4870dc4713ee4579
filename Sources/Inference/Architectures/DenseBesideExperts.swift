import CPUBackend
import GGUF

/// Gemma 4's feed-forward in a layer with experts (26B-A4B): the dense network on the residual's
/// norm, beside experts routed on the residual's RMS norm times the router's per-input scales /
/// √dim and fed their own norm of the residual; the dense output and the experts' are each normed,
/// then added. It reads the residual rows themselves (its branch has no norm before it).
struct DenseBesideExperts: Sublayer {
    /// The dense feed-forward and the norm of its input (`ffn_norm`).
    let dense: FeedForward
    let norm: [Float]
    let experts: MixtureOfExperts
    /// The router's input scales (`ffn_gate_inp.scale`) divided by √dim.
    let routerScales: [Float]
    /// The norm of the experts' input (`pre_ffw_norm_2`), of the dense feed-forward's output
    /// (`post_ffw_norm_1`) and of the experts' (`post_ffw_norm_2`).
    let inputNorm, densePostNorm, postNorm: [Float]

    /// The experts of layer `index` under llama.cpp's names, of the shape `experts`, beside the
    /// `dense` feed-forward normed by `norm`.
    static func load(layer index: Int, from weights: WeightLoader, dense: FeedForward, norm: [Float],
                     experts: ModelConfiguration.Experts) throws(ModelError) -> DenseBesideExperts {
        let width = weights.configuration.embeddingLength
        return DenseBesideExperts(
            dense: dense, norm: norm,
            experts: try MixtureOfExperts.load(layer: index, from: weights, experts: experts, variant: .gemma4),
            routerScales: try weights.scaleVector(.router, layer: index, length: width).map { $0 / Float(width).squareRoot() },
            inputNorm: try weights.vector(.expertsNorm, layer: index),
            densePostNorm: try weights.vector(.denseFeedForwardPostNorm, layer: index),
            postNorm: try weights.vector(.expertsPostNorm, layer: index))
    }

    var matrices: [Matrix] { dense.matrices + experts.matrices }

    /// Its scratch: the experts' input and their router's, beside the experts' own.
    static let expertsInput = ScratchBuffer("experts' input"), routerInput = ScratchBuffer("router input")

    var scratch: [ScratchNeed] {
        let width = routerScales.count
        return [Self.expertsInput.need(floatsPerRow: width), Self.routerInput.need(floatsPerRow: width)] + experts.scratch
    }

    /// The dense output plus the experts' on the residual rows `x`, into `output` (not `x`),
    /// through its scratch.
    func apply(_ x: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration c: ModelConfiguration, state: InferenceState) {
        let width = c.embeddingLength, input = state.scratch(Self.expertsInput), routerInput = state.scratch(Self.routerInput)
        state.backend.rmsNorm(x, weights: norm, epsilon: c.rmsEpsilon, into: output, count: count, width: width)
        dense.apply(output, into: output, count: count, layer: Optional(layer), state: state)
        state.backend.rmsNorm(output, weights: densePostNorm, epsilon: c.rmsEpsilon, into: output, count: count, width: width)
        state.backend.rmsNorm(x, weights: inputNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
        state.backend.rmsNorm(x, weights: routerScales, epsilon: c.rmsEpsilon, into: routerInput, count: count, width: width)
        experts.apply(input, routerInput: routerInput, into: input, count: count, state: state)
        state.backend.rmsNorm(input, weights: postNorm, epsilon: c.rmsEpsilon, into: input, count: count, width: width)
        state.backend.add(input, to: output, count: count * width)
    }
}
