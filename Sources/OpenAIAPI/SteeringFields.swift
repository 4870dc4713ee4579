/// The request fields that change one generation inside the model: llama-server's `lora`, the
/// scales of the server's LoRA adapters (`--lora FILE`) by id, those not named left out for this
/// request; and Lumen's own (llama-server has none): `control_vectors`, the server's named
/// control vectors (`lumen serve --control-vector-file NAME=FILE`) each with its scale, summed;
/// `control_vector_layer_range`, the first and last block (from 0, inclusive) they are added after
/// (default: every block); `features`, the server's named sparse autoencoders (`--sae NAME=PATH`),
/// each with features (by index, as a JSON key) set to activations. A request names what the
/// server loaded (an adapter by its id); it never gives a path.
public struct SteeringFields: Codable, Sendable, Equatable {
    /// Each control vector's name and scale.
    public var controlVectors: [String: Double]?
    /// The first and last block the control vectors are added after.
    public var controlVectorLayerRange: [Int]?
    /// Each SAE's name, with the activation each of its features (`"12345"`) is set to.
    public var features: [String: [String: Double]]?
    /// The server's LoRA adapters this request applies, each with its scale (nil: the server's
    /// scales, as `POST /lora-adapters` last set them).
    public var lora: [LoRAScale]?

    /// Fields; nil ones are left out of the JSON.
    public init(controlVectors: [String: Double]? = nil, controlVectorLayerRange: [Int]? = nil, features: [String: [String: Double]]? = nil,
                lora: [LoRAScale]? = nil) {
        self.controlVectors = controlVectors
        self.controlVectorLayerRange = controlVectorLayerRange
        self.features = features
        self.lora = lora
    }

    /// Whether the request asks for any steering (the server's adapters at its scales are none).
    public var isEmpty: Bool {
        (controlVectors ?? [:]).isEmpty && controlVectorLayerRange == nil && (features ?? [:]).isEmpty && lora == nil
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case controlVectors = "control_vectors", controlVectorLayerRange = "control_vector_layer_range", features, lora
    }

    /// The JSON names of these fields.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.rawValue))
}
