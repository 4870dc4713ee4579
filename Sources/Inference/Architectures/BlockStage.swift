import CPUBackend

/// One step of a `DecoderBlock` over the residual stream: a residual branch (`ResidualBranch`),
/// a per-layer input (`PerLayerEmbeddings.LayerInput`), an output scale (`OutputScale`). A block is
/// its stages in order, so an architecture's block is a list of values, not a set of options.
protocol BlockStage: Sendable {
    /// The matrices one token reads.
    var matrices: [Matrix] { get }
    /// Updates `count` residual rows `x` of block `layer`, with the state's buffers as scratch.
    func apply(to x: UnsafeMutablePointer<Float>, count: Int, layer: Int, configuration: ModelConfiguration, state: InferenceState)
    /// The scratch buffers it uses beyond the state's common ones.
    var scratch: [ScratchNeed] { get }
}

extension BlockStage {
    var scratch: [ScratchNeed] { [] }
}
