import CPUBackend

/// What a `ResidualBranch` computes from its input rows: a token mixer (attention —
/// `SelfAttention`, `GatedAttention` — or a recurrent layer — `GatedDeltaNet`,
/// `ShortConvolution`) or a feed-forward (`FeedForward`, `DenseBesideExperts`).
protocol Sublayer: Sendable {
    /// The matrices one token reads.
    var matrices: [Matrix] { get }
    /// The sublayer over `count` rows of `input` (the residual rows, normed when the branch has a
    /// norm) into `output` (which may be `input`), keeping `layer`'s keys and values or recurrent
    /// state in `state`.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState)
    /// The scratch buffers it uses beyond the state's common ones.
    var scratch: [ScratchNeed] { get }
}

extension Sublayer {
    var scratch: [ScratchNeed] { [] }
}
