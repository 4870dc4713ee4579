import GGUF
import Inference
import Tensors

/// Sets one feature of an SAE to a value at the SAE's hook, as SAELens' hooked SAE does with its
/// error term: the activations become decode(f′) + (x − decode(f)), where f′ is f with the
/// feature set. Decoding is linear, so that is x + (value − fᵢ) · W_dec[i]: the row moves along
/// the feature's direction by what the feature changed, and what the SAE does not reconstruct
/// stays. Value 0 zeroes (ablates) the feature.
public struct SAEFeatureClamp: SiteHook {
    /// The SAE.
    public let sae: SparseAutoencoder
    /// The feature set.
    public let feature: Int
    /// The activation it is set to.
    public let value: Float
    /// The positions changed (nil: every position, a generation's included).
    public let positions: Set<Int>?

    public var point: ActivationPoint { sae.point }
    public var block: Int { sae.block ?? 0 }

    /// Sets `feature` of `sae` to `value` at `positions` (every position when nil).
    public init(_ sae: SparseAutoencoder, feature: Int, value: Float, positions: Set<Int>? = nil) {
        self.sae = sae
        self.feature = feature
        self.value = value
        self.positions = positions
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        try sae.check(fits: model.configuration, file: model.gguf.path)
        guard (0..<sae.featureCount).contains(feature) else {
            throw ModelError(file: model.gguf.path, field: "feature", reason: "feature \(feature) is not one of the SAE's \(sae.featureCount) (0…\(sae.featureCount - 1))")
        }
        guard value.isFinite else { throw ModelError(file: model.gguf.path, field: "value", reason: "\(value) is not a finite activation") }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions range: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let input = Tensor(Array(rows), shape: [range.count, width])
        // The width and the feature were checked against the model before the pass.
        guard let features = try? sae.encode(input), let direction = try? sae.direction(feature) else { return }
        for (row, position) in range.enumerated() where positions?.contains(position) != false {
            let change = value - features.values[row * sae.featureCount + feature]
            for column in 0..<width { rows[row * width + column] += change * direction.values[column] }
        }
    }
}
