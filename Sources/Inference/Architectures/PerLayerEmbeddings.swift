import CPUBackend
import GGUF

/// Gemma 4's per-layer embeddings (E2B, E4B): every layer's own embedding of each token (a row of
/// the table holds all layers' side by side), mixed with a product of the token's scaled
/// embedding (llama.cpp's `project_per_layer_inputs`); each layer gates its part into the
/// residual stream after its feed-forward (`LayerInput`).
struct PerLayerEmbeddings: Sendable {
    let table: Matrix
    let projection: Projection
    let norm: [Float]

    /// A layer's use of its per-layer input: x += RMSNorm(proj · (gelu(gate · x) ⊙ input)).
    struct LayerInput: BlockStage {
        let gate, projection: Projection
        let postNorm: [Float]

        /// The layer input of layer `index` under llama.cpp's names (`inp_gate`, `proj`,
        /// `post_norm`), `width` floats a layer.
        static func load(layer index: Int, from weights: WeightLoader, width: Int) throws(ModelError) -> LayerInput {
            let c = weights.configuration
            return LayerInput(
                gate: try weights.projection(.perLayerInputGate, layer: index, columns: c.embeddingLength, rows: width, applies: []),
                projection: try weights.projection(.perLayerProjection, layer: index, columns: width, rows: c.embeddingLength, applies: []),
                postNorm: try weights.vector(.perLayerPostNorm, layer: index))
        }

        var matrices: [Matrix] { [gate.matrix, projection.matrix] }

        /// Adds layer `layer`'s gated per-layer input (`PerLayerEmbeddings.inputs`) to the residual rows `x`.
        func apply(to x: UnsafeMutablePointer<Float>, count: Int, layer: Int, configuration c: ModelConfiguration, state: InferenceState) {
            let width = gate.matrix.rows, rowWidth = width * c.blockCount, dimension = c.embeddingLength
            let inputs = state.scratch(PerLayerEmbeddings.inputs)
            gate.apply(x, into: state.gate, count: count, state: state)
            state.backend.copyRows(inputs + layer * width, stride: rowWidth, into: state.up, stride: width, width: width, count: count)
            state.backend.activate(.geGLU, gate: state.gate, up: state.up, count: count * width)
            projection.apply(state.gate, into: state.normed, count: count, state: state)
            state.backend.rmsNorm(state.normed, weights: postNorm, epsilon: c.rmsEpsilon, into: state.normed, count: count, width: dimension)
            state.backend.add(state.normed, to: x, count: count * dimension)
        }
    }

    /// The model's per-layer embeddings under llama.cpp's names (`per_layer_token_embd`,
    /// `per_layer_model_proj`, `per_layer_proj_norm`), `width` floats a layer.
    static func load(from weights: WeightLoader, width: Int) throws(ModelError) -> PerLayerEmbeddings {
        let c = weights.configuration, rowWidth = width * c.blockCount
        return PerLayerEmbeddings(
            table: try weights.matrix(.perLayerTokenEmbedding, columns: rowWidth, rows: c.vocabularySize, multiplied: false),
            projection: try weights.projection(.perLayerModelProjection, columns: c.embeddingLength, rows: rowWidth, applies: [], adaptable: false),
            norm: try weights.vector(.perLayerProjectionNorm, length: width))
    }

    /// Floats of one layer's input.
    var width: Int { norm.count }

    /// Each row's per-layer inputs, `[row][layer][width]`, then one more row for a table row being read.
    static let inputs = ScratchBuffer("per-layer inputs")

    var scratch: [ScratchNeed] { [Self.inputs.need(floatsPerRow: table.columns, extraRows: 1)] }

    /// Writes each token's per-layer inputs into its scratch (`inputs`):
    /// (RMSNorm(W·x / √dim), per layer) + table row · √width) / √2, for the embedded rows `x`.
    func prepare(_ tokens: [Int32], embedded x: UnsafeMutablePointer<Float>, configuration c: ModelConfiguration, state: InferenceState) {
        let width = width, rowWidth = table.columns, count = tokens.count
        let inputs = state.scratch(Self.inputs), tableRow = inputs + state.batchCapacity * rowWidth
        projection.apply(x, into: inputs, count: count, state: state)
        state.backend.scale(inputs, by: 1 / Float(c.embeddingLength).squareRoot(), count: count * rowWidth)
        state.backend.rmsNorm(inputs, weights: norm, epsilon: c.rmsEpsilon, into: inputs, count: count * c.blockCount, width: width)
        let tableScale = Float(width).squareRoot(), mixScale = 1 / Float(2).squareRoot()
        for (index, token) in tokens.enumerated() {
            state.backend.embed([token], from: table, into: tableRow, width: rowWidth)
            state.backend.addScaled(tableRow, by: tableScale, to: inputs + index * rowWidth, thenScaleBy: mixScale, count: rowWidth)
        }
    }
}
