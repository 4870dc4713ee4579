import GGUF
import Inference
import Tensors

/// Sets features of an SAE to values at the SAE's hook, as SAELens' hooked SAE does with its
/// error term: the activations become decode(f′) + (x − decode(f)), where f′ is f with the
/// features set. Decoding is linear, so that is x + Σᵢ (valueᵢ − fᵢ) · W_dec[i]: the row moves
/// along each feature's direction by what the feature changed, and what the SAE does not
/// reconstruct stays. Value 0 zeroes (ablates) a feature. Only the features set are encoded
/// (all of them for a TopK SAE).
public struct SAEFeatureClamp: SiteHook {
    /// The SAE.
    public let sae: SparseAutoencoder
    /// The features set, in increasing order, each with the activation it is set to.
    public let settings: [(feature: Int, value: Float)]
    /// The positions changed (nil: every position, a generation's included).
    public let positions: Set<Int>?

    public var point: ActivationPoint { sae.point }
    public var block: Int { sae.block ?? 0 }

    /// Sets `feature` of `sae` to `value` at `positions` (every position when nil).
    public init(_ sae: SparseAutoencoder, feature: Int, value: Float, positions: Set<Int>? = nil) {
        self.init(sae, values: [feature: value], positions: positions)
    }

    /// Sets each feature of `values` to its value at `positions` (every position when nil).
    public init(_ sae: SparseAutoencoder, values: [Int: Float], positions: Set<Int>? = nil) {
        self.sae = sae
        settings = values.sorted { $0.key < $1.key }.map { (feature: $0.key, value: $0.value) }
        self.positions = positions
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        try sae.check(fits: model.configuration, file: model.gguf.path)
        for (feature, value) in settings {
            guard (0..<sae.featureCount).contains(feature) else {
                throw ModelError(file: model.gguf.path, field: "feature", reason: "feature \(feature) is not one of the SAE's \(sae.featureCount) (0…\(sae.featureCount - 1))")
            }
            guard value.isFinite else { throw ModelError(file: model.gguf.path, field: "value", reason: "\(value) is not a finite activation") }
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions range: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let input = Tensor(Array(rows), shape: [range.count, width])
        let features = settings.map(\.feature)
        // The width and the features were checked against the model before the pass.
        guard let activations = try? sae.encode(input, features: features) else { return }
        let directions = features.map { feature in sae.decoder.values[(feature * width)..<((feature + 1) * width)] }
        for (row, position) in range.enumerated() where positions?.contains(position) != false {
            for (index, setting) in settings.enumerated() {
                let change = setting.value - activations.values[row * settings.count + index]
                let direction = directions[index]
                for column in 0..<width { rows[row * width + column] += change * direction[direction.startIndex + column] }
            }
        }
    }
}
