import CPUBackend
import Foundation
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
/// (`InferenceState.recurrentState`), zeroed when a sequence starts at position 0.
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
            convolution: try CausalConvolution.load(.convolution, layer: index, from: weights, width: convolutionWidth, channels: shape.channels),
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
        for index in 0..<(count * s.valueHeads) {
            let head = index % s.valueHeads
            strengths[index] = 1 / (1 + exp(-strengths[index]))
            decays[index] = Self.softplus(decays[index] + decayBias[head]) * decayRate[head]
        }
        convolution.apply(mixed, stride: channels, channels: channels, count: count, layer: layer, activation: .silu, state: state)
        let rowSequences = state.rowSequences, rowPositions = state.rowPositions
        // Queries and keys L2-normalized per head: x / √(Σx² + ε).
        for row in 0..<count {
            for head in 0..<(2 * s.keyHeads) {
                let vector = mixed + row * channels + head * s.keyHeadDimension
                var squares: Float = 0
                for index in 0..<s.keyHeadDimension { squares += vector[index] * vector[index] }
                let scale = 1 / (squares + epsilon).squareRoot()
                for index in 0..<s.keyHeadDimension { vector[index] *= scale }
            }
        }
        // The delta rule, value head by value head through the rows in order. A head's state is
        // stored as llama.cpp's: row j holds S[·][j], so each product reads a row.
        let keyWidth = s.keyHeadDimension, valueWidth = s.valueHeadDimension
        let statesOffset = (convolution.width - 1) * channels, scale = 1 / Float(valueWidth).squareRoot()
        let out = state.scratch(Self.outputs)
        state.pool.parallelChunks(s.valueHeads, chunk: 1, work: count * s.valueHeads * keyWidth * valueWidth * 4) { _, range in
            for head in range {
                let keyHead = head % s.keyHeads
                for row in 0..<count {
                    let sequence = rowSequences[row]
                    let matrix = state.recurrentState(sequence: sequence, layer: layer) + statesOffset + head * keyWidth * valueWidth
                    if rowPositions[row] == 0 { matrix.update(repeating: 0, count: keyWidth * valueWidth) }
                    let base = mixed + row * channels
                    let query = base + keyHead * keyWidth, key = base + s.keyDimension + keyHead * keyWidth
                    let value = base + 2 * s.keyDimension + head * valueWidth
                    let factor = exp(decays[row * s.valueHeads + head]), strength = strengths[row * s.valueHeads + head]
                    let result = out + row * s.valueDimension + head * valueWidth
                    // Row j of the state (S[·][j]): decay it, read Sᵀk there, write the delta
                    // (v − Sᵀk)β along k, then read Sᵀq — each row once, while it is in cache.
                    for j in 0..<valueWidth {
                        let column = matrix + j * keyWidth
                        for i in 0..<keyWidth { column[i] *= factor }
                        let change = (value[j] - Self.dot(column, key, keyWidth)) * strength
                        for i in 0..<keyWidth { column[i] += key[i] * change }
                        result[j] = Self.dot(column, query, keyWidth) * scale
                    }
                }
            }
        }
        // RMSNorm per value head, times SiLU of the gate; then the output projection.
        Operations.rmsNorm(out, weights: norm, epsilon: epsilon, into: out, count: count * s.valueHeads, width: valueWidth)
        for index in 0..<(count * s.valueDimension) {
            let g = gate[index]
            out[index] *= g / (1 + exp(-g))
        }
        self.output.apply(out, into: output, count: count, state: state)
    }

    /// The dot product of `count` floats at `a` and `b`, eight lanes at a time.
    @inline(__always)
    private static func dot(_ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>, _ count: Int) -> Float {
        var lanes = SIMD8<Float>(), index = 0
        while index + 8 <= count {
            lanes += UnsafeRawPointer(a + index).loadUnaligned(as: SIMD8<Float>.self) * UnsafeRawPointer(b + index).loadUnaligned(as: SIMD8<Float>.self)
            index += 8
        }
        var sum = lanes.sum()
        while index < count {
            sum += a[index] * b[index]
            index += 1
        }
        return sum
    }

    /// ggml's softplus: log(1 + eˣ), x itself above 20.
    private static func softplus(_ x: Float) -> Float { x > 20 ? x : log1p(exp(x)) }
}
