import CPUBackend
import GGUF

/// A Gated DeltaNet layer (linear attention with a gated delta rule, Qwen3.5's recurrent layers),
/// as llama.cpp's `build_layer_attn_linear` and its `gated_delta_net` operation compute it. For
/// each token: the queries, keys and values (one product, `attn_qkv`) go through a short causal
/// convolution over the last `convolutionWidth` inputs of each channel and SiLU; queries and
/// keys are L2-normalized per head; each value head's state S (key × value) decays by
/// exp(g) — g = softplus(α + dt bias) · a — then takes the delta rule's write
/// S += k ⊗ β (v − Sᵀk), β = sigmoid(·), and the head's output is Sᵀq / √(head width); the
/// output is RMS-normed per value head, times SiLU of the output gate (`attn_gate`), and
/// projected back (`ssm_out`). Value head h reads key head h mod (key heads), as ggml repeats
/// them. The convolution's last inputs and the states are each sequence's recurrent state
/// (`InferenceState.recurrentStates`), zeroed when a sequence starts at position 0.
struct GatedDeltaNet: Sublayer {
    /// Queries, keys and values in one product (`attn_qkv`), before the convolution.
    let mix: Projection
    /// The gate of the output (`attn_gate`, llama.cpp's `z`).
    let outputGate: Projection
    /// The short convolution over queries, keys and values, then SiLU.
    let convolution: CausalConvolution
    /// Each value head's decay bias (`ssm_dt.bias`) and rate (`ssm_a`, −exp(A_log)).
    let decayBias, decayRate: [Float]
    /// The per-head decay (α, `ssm_alpha`) and write strength (β before its sigmoid, `ssm_beta`) products.
    let decay, writeStrength: Projection
    /// The RMSNorm of each value head's output (`ssm_norm`).
    let norm: [Float]
    /// The projection back to the residual stream (`ssm_out`).
    let output: Projection
    let shape: ModelConfiguration.DeltaRule

    /// The layer `index` under llama.cpp's names, with the scales the file has.
    static func load(layer index: Int, from weights: WeightLoader, convolutionWidth: Int, shape: ModelConfiguration.DeltaRule) throws(ModelError) -> GatedDeltaNet {
        let c = weights.configuration
        return GatedDeltaNet(
            mix: try weights.projection(.queryKeyValue, layer: index, columns: c.embeddingLength, rows: shape.channels, applies: .scale),
            outputGate: try weights.projection(.attentionGate, layer: index, columns: c.embeddingLength, rows: shape.valueDimension, applies: .scale),
            convolution: try CausalConvolution.load(.convolution, layer: index, from: weights, width: convolutionWidth, channels: shape.channels,
                                                  silu: true),
            decayBias: try weights.bias(.decayBias, layer: index, length: shape.valueHeads),
            decayRate: try weights.bareVector(.decayRate, layer: index, length: shape.valueHeads),
            decay: try weights.projection(.decay, layer: index, columns: c.embeddingLength, rows: shape.valueHeads, applies: .scale),
            writeStrength: try weights.projection(.writeStrength, layer: index, columns: c.embeddingLength, rows: shape.valueHeads, applies: .scale),
            norm: try weights.vector(.recurrentNorm, layer: index, length: shape.valueHeadDimension),
            output: try weights.projection(.recurrentOutput, layer: index, columns: shape.valueDimension, rows: c.embeddingLength, applies: .scale),
            shape: shape)
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { [mix, outputGate, decay, writeStrength, output].map(\.matrix) }

    /// Its scratch: the queries, keys and values mixed, the output's gate, each value head's decay
    /// and write strength, and the output before its projection.
    static let mixed = ScratchBuffer("delta rule inputs"), gates = ScratchBuffer("delta rule output gates"),
               decays = ScratchBuffer("decays"), strengths = ScratchBuffer("write strengths"), outputs = ScratchBuffer("delta rule outputs")

    var scratch: [ScratchNeed] {
        [Self.mixed.need(floatsPerRow: shape.channels), Self.gates.need(floatsPerRow: shape.valueDimension),
         Self.decays.need(floatsPerRow: shape.valueHeads), Self.strengths.need(floatsPerRow: shape.valueHeads),
         Self.outputs.need(floatsPerRow: shape.valueDimension)]
    }

    /// The layer over `count` rows of `input` (normed residual rows) into `output`, continuing
    /// each row's sequence's state in `layer`.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState) {
        let s = shape, channels = s.channels, epsilon = configuration.rmsEpsilon
        let mixed = state.scratch(Self.mixed), gate = state.scratch(Self.gates)
        let decays = state.scratch(Self.decays), strengths = state.scratch(Self.strengths)
        mix.apply(input, into: mixed, count: count, state: state)
        outputGate.apply(input, into: gate, count: count, state: state)
        decay.apply(input, into: decays, count: count, state: state)
        writeStrength.apply(input, into: strengths, count: count, state: state)
        convolution.apply(mixed, stride: channels, channels: channels, count: count, layer: layer, state: state)
        let out = state.scratch(Self.outputs)
        let deltaShape = DeltaRuleShape(keyHeads: s.keyHeads, valueHeads: s.valueHeads, keyHeadWidth: s.keyHeadDimension, valueHeadWidth: s.valueHeadDimension,
                                        epsilon: epsilon, stride: channels, stateOffset: (convolution.width - 1) * channels)
        state.backend.deltaRule(mixed, gates: DeltaRuleGates(strengths: strengths, decays: decays, decayBias: decayBias, decayRate: decayRate),
                                count: count, places: state.places, shape: deltaShape, states: state.recurrentStates(layer: layer), into: out)
        // RMSNorm per value head, times SiLU of the gate; then the output projection.
        state.backend.rmsNorm(out, weights: norm, epsilon: epsilon, into: out, count: count * s.valueHeads, width: s.valueHeadDimension)
        state.backend.activate(.swiGLU, gate: gate, up: out, count: count * s.valueDimension)
        self.output.apply(gate, into: output, count: count, state: state)
    }
}
