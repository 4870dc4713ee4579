/// What mixes positions in one layer of a `DecoderBlock`: attention (`SelfAttention`,
/// `GatedAttention`) or a recurrent layer (`GatedDeltaNet`, `ShortConvolution`).
protocol TokenMixer: Sendable {
    /// The matrices one token reads.
    var matrices: [Matrix] { get }
    /// The layer over `count` rows of `input` (normed residual rows) into `output` (which may be
    /// `input`), keeping `layer`'s keys and values or recurrent state in `state`.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration: ModelConfiguration, state: InferenceState)
}
