import CPUBackend

/// The last step of every architecture's forward pass: the final RMS norm and the output matrix,
/// residual-stream rows to logits. The logit lens applies it to every block's residual stream.
struct Unembedding: Sendable {
    /// The final norm's weights.
    let norm: [Float]
    /// The output projection (the token embedding when the file ties them).
    let output: Projection
    /// Logits become `cap · tanh(logits / cap)` (Gemma 4's `final_logit_softcapping`), when set.
    var softcap: Float?

    /// Writes the logits of the `count` residual rows at `rows` into `state.logits`, row after
    /// row (`count` at most the batch capacity), through `state.normed`, softcapped when the
    /// architecture says (`softcap`). With `visiting` (the rows are
    /// the pass's, every one), hooks see the final norm and the logits.
    func apply(_ rows: UnsafeMutablePointer<Float>, count: Int, configuration c: ModelConfiguration, state: InferenceState, visiting: Bool = false) {
        normalize(rows, count: count, configuration: c, into: state.normed, state: state)
        if visiting { state.visit(.finalNorm, layer: 0, rows: state.normed, count: count, width: c.embeddingLength) }
        output.apply(state.normed, into: state.logits, count: count, state: state)
        if let cap = softcap { state.backend.softcap(state.logits, cap: cap, count: count * output.matrix.rows) }
        if visiting { state.visit(.logits, layer: 0, rows: state.logits, count: count, width: output.matrix.rows) }
    }

    /// Writes the final norm of the `count` residual rows at `rows` into `output`: the hidden
    /// states the output matrix reads (and that text embeddings pool), on `state`'s backend.
    func normalize(_ rows: UnsafeMutablePointer<Float>, count: Int, configuration c: ModelConfiguration, into output: UnsafeMutablePointer<Float>,
                   state: InferenceState) {
        state.backend.rmsNorm(rows, weights: norm, epsilon: c.rmsEpsilon, into: output, count: count, width: c.embeddingLength)
    }
}
