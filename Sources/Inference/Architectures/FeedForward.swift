import CPUBackend
import GGUF

/// A decoder block's feed-forward: one gated network, or a mixture of experts.
enum FeedForward: Sublayer {
    /// `down · (act(gate · x) ⊙ up · x)`, SiLU unless the `activation` says (Gemma's GELU).
    case dense(gate: Projection, up: Projection, down: Projection, activation: GatedActivation = .swiGLU)
    /// Routed experts, each a gated network (`GatedActivation`).
    indirect case experts(MixtureOfExperts)

    /// The feed-forward of layer `index`: the experts (of `variant`) when the model has them
    /// (`configuration.experts`) past its leading dense layers, else the dense network with the
    /// scale and bias of `extras` the file has.
    static func load(layer index: Int, from weights: WeightLoader, extras: Projection.Extras,
                     experts variant: MixtureOfExperts.Variant = .standard) throws(ModelError) -> FeedForward {
        let c = weights.configuration
        if let experts = c.experts, index >= c.leadingDenseLayers {
            return .experts(try MixtureOfExperts.load(layer: index, from: weights, experts: experts, variant: variant))
        }
        return try loadDense(layer: index, from: weights, extras: extras)
    }

    /// The dense network of layer `index` (of the layer's width), with the scale and bias of
    /// `extras` the file has, gated by `activation`.
    static func loadDense(layer index: Int, from weights: WeightLoader, extras: Projection.Extras,
                          activation: GatedActivation = .swiGLU) throws(ModelError) -> FeedForward {
        let c = weights.configuration.layer(index)
        return .dense(gate: try weights.projection(.gate, layer: index, columns: c.embeddingLength, rows: c.feedForwardLength, applies: extras),
                      up: try weights.projection(.up, layer: index, columns: c.embeddingLength, rows: c.feedForwardLength, applies: extras),
                      down: try weights.projection(.down, layer: index, columns: c.feedForwardLength, rows: c.embeddingLength, applies: extras),
                      activation: activation)
    }

    /// The matrices one generated token reads in full.
    var matrices: [Matrix] {
        switch self {
        case let .dense(gate, up, down, _): [gate.matrix, up.matrix, down.matrix]
        case let .experts(experts): experts.matrices
        }
    }

    /// The feed-forward of `count` rows of `input` into `output` (which may be `input`), with the
    /// state's `gate` and `up` buffers as its hidden layer; hooks see a dense network's gate
    /// before and after the activation as those of block `layer` (none when nil: a mixture's
    /// shared expert).
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int?, state: InferenceState) {
        switch self {
        case let .dense(gate, up, down, activation):
            let hidden = gate.matrix.rows
            gate.apply(input, into: state.gate, count: count, state: state)
            if let layer { state.visit(.feedForwardPreActivation, layer: layer, rows: state.gate, count: count, width: hidden) }
            up.apply(input, into: state.up, count: count, state: state)
            state.backend.activate(activation, gate: state.gate, up: state.up, count: count * hidden)
            if let layer { state.visit(.feedForwardActivation, layer: layer, rows: state.gate, count: count, width: hidden) }
            down.apply(state.gate, into: output, count: count, state: state)
        case let .experts(experts):
            experts.apply(input, into: output, count: count, state: state)
        }
    }

    var scratch: [ScratchNeed] {
        switch self {
        case .dense: []
        case let .experts(experts): experts.scratch
        }
    }

    /// The feed-forward of block `layer`, as a residual branch runs it.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState) {
        apply(input, into: output, count: count, layer: Optional(layer), state: state)
    }
}
