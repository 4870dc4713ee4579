/// A LoRA adapter a run applied: its file (path and, filled in by the log, SHA-256) and scale.
public struct RunAdapter: Codable, Sendable, Equatable {
    /// The adapter GGUF's path.
    public var path: String
    /// The scale it was applied at.
    public var scale: Double
    /// The file's SHA-256, hex; the log computes it once per file.
    public var sha256: String?

    /// An adapter at `scale`.
    public init(path: String, scale: Double, sha256: String? = nil) {
        self.path = path
        self.scale = scale
        self.sha256 = sha256
    }
}
