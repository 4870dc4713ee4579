/// The control vectors a generation was steered with (llama.cpp's `--control-vector` options),
/// so the run log keeps them and `replay` applies them again.
public struct RunSteering: Codable, Sendable, Equatable {
    /// One control vector, from a file or built from prompt pairs, and the scale it was added with.
    public struct Vector: Codable, Sendable, Equatable {
        /// The control-vector file it was read from.
        public var path: String?
        /// The prompts a contrastive vector was built from (`steeringVector`).
        public var positive, negative: [String]?
        /// The direction itself, for a vector made in a cell (a Tensor), added after each block
        /// steered.
        public var values: [Float]?
        /// How a contrastive vector was made from its prompts (`ContrastiveMethod`'s name; nil:
        /// "last", the default).
        public var method: String?
        /// Whether each block's direction was scaled to unit length (`normalize`).
        public var normalized: Bool?
        /// Its scale.
        public var scale: Double

        /// A vector file with its scale.
        public init(path: String, scale: Double) {
            self.path = path
            self.scale = scale
        }

        /// A direction given by its values, with its scale.
        public init(values: [Float], scale: Double) {
            self.values = values
            self.scale = scale
        }

        /// A vector built from prompt pairs by `method` (nil: the default), with its scale.
        public init(positive: [String], negative: [String], method: String? = nil, scale: Double) {
            self.positive = positive
            self.negative = negative
            self.method = method
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
