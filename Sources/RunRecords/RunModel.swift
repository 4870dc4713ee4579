/// Which model ran: its file (path and, filled in by the log, SHA-256), architecture, tensor
/// types and the LoRA adapters applied to it; or a remote endpoint and the model name it serves.
public struct RunModel: Codable, Sendable, Equatable {
    /// The model's name as the cell knows it.
    public var name: String
    /// The GGUF file's path (or the endpoint's URL, for a remote model).
    public var path: String
    /// The file's SHA-256, hex; the log computes it once per file.
    public var sha256: String?
    /// The architecture (`llama`, `gemma3`, …).
    public var architecture: String
    /// The tensor types with their counts, as `lumen info` lists them.
    public var tensorTypes: String
    /// The LoRA adapters applied, in order; nil for none.
    public var adapters: [RunAdapter]?

    /// A model.
    public init(name: String, path: String, sha256: String? = nil, architecture: String, tensorTypes: String, adapters: [RunAdapter]? = nil) {
        self.name = name
        self.path = path
        self.sha256 = sha256
        self.architecture = architecture
        self.tensorTypes = tensorTypes
        self.adapters = adapters
    }
}
