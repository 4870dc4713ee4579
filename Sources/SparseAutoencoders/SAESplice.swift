import GGUF
import Inference
import Tensors

/// Replaces the activations at an SAE's hook with the SAE's reconstruction of them, at every
/// position (SAELens' spliced forward pass, without the error term): what the rest of the model
/// computes from then on is what it computes from the SAE's picture of its activations.
public struct SAESplice: SiteHook {
    /// The SAE.
    public let sae: SparseAutoencoder

    public var point: ActivationPoint { sae.point }
    public var block: Int { sae.block ?? 0 }

    /// A splice of `sae` at its hook.
    public init(_ sae: SparseAutoencoder) {
        self.sae = sae
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        try sae.check(fits: model.configuration, file: model.gguf.path)
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let input = Tensor(Array(rows), shape: [positions.count, width])
        // The width was checked against the model before the pass: encoding cannot fail.
        guard let reconstruction = try? sae.decode(sae.encode(input)) else { return }
        for (index, value) in reconstruction.values.enumerated() { rows[index] = value }
    }
}
