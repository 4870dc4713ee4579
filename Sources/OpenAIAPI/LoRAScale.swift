/// One adapter's scale by its id, as llama-server reads them: an entry of `POST /lora-adapters`'
/// body and of a generation request's `lora` field (`[{"id": 0, "scale": 0.5}]`).
public struct LoRAScale: Codable, Sendable, Equatable {
    /// The adapter's id: its place among the server's adapters, from 0.
    public var id: Int
    /// Its scale (llama.cpp's `--lora-scaled`): 0 leaves it out.
    public var scale: Double

    /// Adapter `id` at `scale`.
    public init(id: Int, scale: Double) {
        self.id = id
        self.scale = scale
    }
}
