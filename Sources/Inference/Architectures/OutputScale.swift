import CPUBackend

/// x *= scale: a block's output scale (Gemma 4's `layer_output_scale`).
struct OutputScale: BlockStage {
    let scale: Float

    var matrices: [Matrix] { [] }

    func apply(to x: UnsafeMutablePointer<Float>, count: Int, layer: Int, configuration c: ModelConfiguration, state: InferenceState) {
        state.backend.scale(x, by: scale, count: count * c.embeddingLength)
    }
}
