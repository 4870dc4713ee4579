import CPUBackend
import GGUF

/// A mixture of experts' feed-forward, as llama.cpp's `build_moe_ffn` computes it: the router
/// scores every expert for each token, the scores' softmax (or each one's sigmoid) picks the
/// `used` most probable (after adding the selection bias, when the file has one), their
/// probabilities are divided by their sum (with softmax, the softmax of the chosen scores alone,
/// gpt-oss's gating), and the token's output is the weighted sum of those experts' gated
/// feed-forwards, added in the order they were chosen.
/// Each expert multiplies only the rows routed to it, gathered together: a generated token reads
/// the router and `used` experts' weights, a prompt batch each expert's once.
struct MixtureOfExperts: Sendable {
    /// The router (`ffn_gate_inp`): a score per expert.
    let router: Projection
    /// Each expert's gate, up and down products: its rows of the three-dimensional expert
    /// tensors, with its entry of their per-expert scales.
    let gate, up, down: [Projection]
    /// Experts each token is routed to.
    let used: Int
    /// How an expert's gate meets its up product.
    let activation: GatedActivation
    /// How the router's scores become probabilities (`ModelConfiguration.Experts.gating`).
    let gating: ExpertGating
    /// Added to the probabilities only to choose the experts (`exp_probs_b`), when the file has it.
    let selectionBias: [Float]?

    /// What an architecture's graph asks of its experts: their activation, and which of their
    /// per-expert scales and biases it applies (llama.cpp's graphs pass some to `build_moe_ffn`
    /// and leave others in the file unused).
    struct Variant: Sendable {
        var activation: GatedActivation = .swiGLU
        var extras: Projection.Extras = .scale

        /// Qwen 3, Qwen 3.5 and Mixtral's: SwiGLU experts with their scales.
        static let standard = Variant()
        /// gpt-oss's: clamped SwiGLU experts with their biases.
        static let gptOss = Variant(activation: .clampedSwiGLU, extras: .bias)
        /// LFM2-MoE's: SwiGLU experts without their scales.
        static let lfm2 = Variant(extras: [])
        /// Gemma 4's: GELU-gated experts with their scales.
        static let gemma4 = Variant(activation: .geGLU)
    }
    /// The expert every token goes through besides (Qwen3.5-MoE's, Qwen3-Next's), scaled by the
    /// sigmoid of its gate's product with the token, when the file has one.
    let shared: SharedExpert?

    /// A shared expert: a gate vector and a SwiGLU feed-forward.
    struct SharedExpert: Sendable {
        let gate: [Float]
        let feedForward: FeedForward
    }

    /// The experts of layer `index` under llama.cpp's names, of the shape `configuration.experts`
    /// gives, with the router's bias and the experts' scales and biases `variant` applies when the
    /// file has them.
    static func load(layer index: Int, from weights: WeightLoader, experts: ModelConfiguration.Experts,
                     variant: Variant) throws(ModelError) -> MixtureOfExperts {
        let c = weights.configuration, width = experts.feedForwardLength
        var gate: [Projection], up: [Projection]
        if weights.has(.gateUpExperts, layer: index) {
            // One tensor of each expert's gate rows, then its up rows (with the up tensor's scales, as llama.cpp applies them).
            let both = try weights.experts(.gateUpExperts, layer: index, columns: c.embeddingLength, rows: 2 * width, count: experts.count,
                                           applies: variant.extras, scales: .upExperts)
            gate = both.map { $0.rows(0..<width) }
            up = both.map { $0.rows(width..<(2 * width)) }
        } else {
            gate = try weights.experts(.gateExperts, layer: index, columns: c.embeddingLength, rows: width, count: experts.count, applies: variant.extras)
            up = try weights.experts(.upExperts, layer: index, columns: c.embeddingLength, rows: width, count: experts.count, applies: variant.extras)
        }
        var shared: SharedExpert?
        if weights.has(.upSharedExpert, layer: index) {
            let sharedWidth = experts.sharedFeedForwardLength
            shared = SharedExpert(
                gate: try weights.vector(.sharedExpertGate, layer: index),
                feedForward: .dense(
                    gate: try weights.projection(.gateSharedExpert, layer: index, columns: c.embeddingLength, rows: sharedWidth, applies: .scale),
                    up: try weights.projection(.upSharedExpert, layer: index, columns: c.embeddingLength, rows: sharedWidth, applies: .scale),
                    down: try weights.projection(.downSharedExpert, layer: index, columns: sharedWidth, rows: c.embeddingLength, applies: .scale)))
        }
        return MixtureOfExperts(
            router: try weights.projection(.router, layer: index, columns: c.embeddingLength, rows: experts.count, applies: .bias),
            gate: gate, up: up,
            down: try weights.experts(.downExperts, layer: index, columns: width, rows: c.embeddingLength, count: experts.count,
                                      applies: variant.extras),
            used: experts.used, activation: variant.activation,
            gating: experts.gating,
            selectionBias: try weights.optionalBias(.expertSelectionBias, layer: index, length: experts.count),
            shared: shared)
    }

    /// The matrices one generated token reads in full: the router and `used` experts' (every
    /// expert is the same size).
    var matrices: [Matrix] {
        [router.matrix] + (0..<used).flatMap { [gate[$0].matrix, up[$0].matrix, down[$0].matrix] } + (shared?.feedForward.matrices ?? [])
    }

    /// Its scratch: the router's scores, the rows routed to one expert gathered, and each row's
    /// expert outputs in the order they were chosen.
    static let routerScores = ScratchBuffer("router scores"), routedRows = ScratchBuffer("routed rows"),
               expertOutputs = ScratchBuffer("expert outputs")

    var scratch: [ScratchNeed] {
        let dimension = router.matrix.columns
        return [Self.routerScores.need(floatsPerRow: gate.count), Self.routedRows.need(floatsPerRow: dimension),
                Self.expertOutputs.need(floatsPerRow: used * dimension)]
    }

    /// The feed-forward of `count` rows of `input` into `output` (which may be `input`: every
    /// input row is read before an output row is written), routed by the router's product with
    /// `routerInput` rows when given (Gemma 4 routes on other rows than its experts take), else
    /// with `input`.
    func apply(_ input: UnsafeMutablePointer<Float>, routerInput: UnsafeMutablePointer<Float>? = nil,
               into output: UnsafeMutablePointer<Float>, count: Int, state: InferenceState) {
        let experts = gate.count, dimension = router.matrix.columns, width = gate[0].matrix.rows
        let scores = state.scratch(Self.routerScores)
        router.apply(routerInput ?? input, into: scores, count: count, state: state)
        // Each row's chosen experts, most probable first, and their weights.
        let routing = state.backend.route(scores, count: count, experts: experts, used: used, gating: gating, selectionBias: selectionBias)
        // Each expert on the rows routed to it: gathered, multiplied, and each result put in its
        // row's slot for that expert.
        let gathered = state.scratch(Self.routedRows), outputs = state.scratch(Self.expertOutputs)
        var places: [Int] = []
        places.reserveCapacity(count)
        for expert in 0..<experts {
            places.removeAll(keepingCapacity: true)
            for place in routing.chosen.indices where routing.chosen[place] == expert { places.append(place) }
            if places.isEmpty { continue }
            let rows = places.map { $0 / used }
            state.backend.gatherRows(input, rows: rows, width: dimension, into: gathered)
            let tokens = (indices: rows, of: count)
            gate[expert].apply(gathered, into: state.gate, count: places.count, state: state, tokens: tokens)
            up[expert].apply(gathered, into: state.up, count: places.count, state: state, tokens: tokens)
            state.backend.activate(activation, gate: state.gate, up: state.up, count: places.count * width)
            down[expert].apply(state.gate, into: gathered, count: places.count, state: state, tokens: tokens)
            state.backend.scatterRows(gathered, into: outputs, rows: places, width: dimension)
        }
        // The shared expert on every row (its output where the gathered rows were), gated; each
        // row's experts' outputs weighted and summed in the order they were chosen, then the
        // shared expert's.
        var sharedRows: (rows: UnsafeMutablePointer<Float>, gates: [Float])?
        if let shared {
            let gates = state.backend.sigmoidOfDots(shared.gate, input, count: count)
            shared.feedForward.apply(input, into: gathered, count: count, layer: nil, state: state)
            sharedRows = (gathered, gates)
        }
        state.backend.combineExperts(outputs, routing: routing, shared: sharedRows, into: output, count: count, width: dimension)
    }
}
