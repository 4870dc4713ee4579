/// The fields both generation requests (`/v1/completions`, `/v1/chat/completions`) carry
/// besides their prompt: the model, streaming, choices, user, the sampling fields and Lumen's
/// steering fields, read and written once for both.
protocol GenerationRequestFields {
    /// The coding keys of the request, which name these fields too.
    associatedtype CodingKeys: GenerationRequestKeys
    var model: String? { get set }
    var sampling: SamplingFields { get set }
    var steering: SteeringFields { get set }
    var stream: Bool? { get set }
    var streamOptions: StreamOptions? { get set }
    var n: Int? { get set }
    var user: String? { get set }
}

/// The coding keys of the fields every generation request has.
protocol GenerationRequestKeys: CodingKey {
    static var model: Self { get }
    static var stream: Self { get }
    static var streamOptions: Self { get }
    static var n: Self { get }
    static var user: Self { get }
}

extension GenerationRequestFields {
    /// Reads the shared fields from `container` and the sampling and steering fields beside them.
    mutating func decodeSharedFields(from container: KeyedDecodingContainer<CodingKeys>, decoder: any Decoder) throws {
        model = try container.decodeIfPresent(String.self, forKey: .model)
        stream = try container.decodeIfPresent(Bool.self, forKey: .stream)
        streamOptions = try container.decodeIfPresent(StreamOptions.self, forKey: .streamOptions)
        n = try container.decodeIfPresent(Int.self, forKey: .n)
        user = try container.decodeIfPresent(String.self, forKey: .user)
        sampling = try SamplingFields(from: decoder)
        steering = try SteeringFields(from: decoder)
    }

    /// Writes the shared fields into `container` and the sampling and steering fields beside them.
    func encodeSharedFields(into container: inout KeyedEncodingContainer<CodingKeys>, encoder: any Encoder) throws {
        try container.encodeIfPresent(model, forKey: .model)
        try container.encodeIfPresent(stream, forKey: .stream)
        try container.encodeIfPresent(streamOptions, forKey: .streamOptions)
        try container.encodeIfPresent(n, forKey: .n)
        try container.encodeIfPresent(user, forKey: .user)
        try sampling.encode(to: encoder)
        try steering.encode(to: encoder)
    }
}
