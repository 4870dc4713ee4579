/// One adapter the server loaded, as llama-server's `GET /lora-adapters` lists it: its id, the
/// file it was given as, and the scale requests without a `lora` field get.
public struct LoRAAdapterCard: Codable, Sendable, Equatable {
    /// Its place among the server's adapters, from 0.
    public var id: Int
    /// The file, as the server was given it (`--lora FILE`).
    public var path: String
    /// The scale requests without a `lora` field get.
    public var scale: Double

    /// Adapter `id` from `path` at `scale`.
    public init(id: Int, path: String, scale: Double) {
        self.id = id
        self.path = path
        self.scale = scale
    }
}
