/// The control vectors a generation was steered with (llama.cpp's `--control-vector` options),
/// so the run log keeps them and `replay` applies them again.
public struct RunSteering: Codable, Sendable, Equatable {
    /// One control-vector file and the scale it was added with.
    public struct Vector: Codable, Sendable, Equatable {
        /// The file's path.
        public var path: String
        /// Its scale.
        public var scale: Double

        /// A vector file with its scale.
        public init(path: String, scale: Double) {
            self.path = path
            self.scale = scale
        }
    }

    /// The vectors, summed.
    public var vectors: [Vector]
    /// The first and last block they were added after (nil: every block).
    public var blocks: [Int]?

    /// Steering by `vectors` after `blocks`.
    public init(vectors: [Vector], blocks: [Int]?) {
        self.vectors = vectors
        self.blocks = blocks
    }
}
