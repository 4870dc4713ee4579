import CPUBackend
import GGUF

/// Attention whose output each head gates (Qwen3.5's and Qwen3-Next's attention layers, llama.cpp's
/// `build_layer_attn` there): the query product gives each head its query and then its gate
/// (`attn_q`, twice the query width, the two side by side per head); queries and keys are
/// RMS-normed per head and rotated; the heads' attention output is multiplied by sigmoid of
/// their gate before the output product.
struct GatedAttention: Sublayer {
    let queryAndGate, key, value: Projection
    let queryNorm, keyNorm: [Float]
    let output: Projection

    /// The layer `index` under llama.cpp's names, with the scales and biases the file has (the
    /// output product's scale only, as its graph applies).
    static func load(layer index: Int, from weights: WeightLoader) throws(ModelError) -> GatedAttention {
        let c = weights.configuration
        return GatedAttention(
            queryAndGate: try weights.projection(.query, layer: index, columns: c.embeddingLength, rows: 2 * c.queryDimension),
            key: try weights.projection(.key, layer: index, columns: c.embeddingLength, rows: c.kvDimension),
            value: try weights.projection(.value, layer: index, columns: c.embeddingLength, rows: c.kvDimension),
            queryNorm: try weights.vector(.queryNorm, layer: index, length: c.headDimension),
            keyNorm: try weights.vector(.keyNorm, layer: index, length: c.headDimension),
            output: try weights.projection(.attentionOutput, layer: index, columns: c.queryDimension, rows: c.embeddingLength, applies: .scale))
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { [queryAndGate, key, value, output].map(\.matrix) }

    /// Its scratch: each head's query and gate side by side, and the gates alone.
    static let queriesAndGates = ScratchBuffer("queries and gates"), gates = ScratchBuffer("output gates")

    var scratch: [ScratchNeed] {
        [Self.queriesAndGates.need(floatsPerRow: queryAndGate.matrix.rows), Self.gates.need(floatsPerRow: output.matrix.columns)]
    }

    /// The layer over `count` rows of `input` into `output` (which may be `input`), its keys and
    /// values into the cache of `layer`.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration c: ModelConfiguration, state: InferenceState) {
        let width = c.headDimension, queryWidth = c.queryDimension
        let mixed = state.scratch(Self.queriesAndGates), gates = state.scratch(Self.gates)
        queryAndGate.apply(input, into: mixed, count: count, state: state)
        key.apply(input, into: state.key, count: count, state: state)
        value.apply(input, into: state.value, count: count, state: state)
        // Each head's query, then its gate, side by side in the product.
        state.backend.copyRows(mixed, stride: 2 * width, into: state.query, stride: width, width: width, count: count * c.headCount)
        state.backend.copyRows(mixed + width, stride: 2 * width, into: gates, stride: width, width: width, count: count * c.headCount)
        state.backend.rmsNorm(state.query, weights: queryNorm, epsilon: c.rmsEpsilon, into: state.query, count: count * c.headCount, width: width)
        state.backend.rmsNorm(state.key, weights: keyNorm, epsilon: c.rmsEpsilon, into: state.key, count: count * c.headCountKV, width: width)
        state.rotateAndCache(layer: layer, count: count, configuration: c, cosines: state.ropeCosines, sines: state.ropeSines)
        state.attend(layer: layer, count: count, configuration: c)
        state.backend.sigmoidGate(state.attended, by: gates, count: count * queryWidth)
        self.output.apply(state.attended, into: output, count: count, state: state)
    }
}
