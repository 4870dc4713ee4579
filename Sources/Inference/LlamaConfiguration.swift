/// The shape of a LLaMA-architecture model, read from GGUF metadata.
public struct LlamaConfiguration: Sendable, Equatable {
    /// Width of the residual stream.
    public var embeddingLength: Int
    /// Number of transformer blocks.
    public var blockCount: Int
    /// Width of the feed-forward hidden layer.
    public var feedForwardLength: Int
    /// Number of query heads.
    public var headCount: Int
    /// Number of key/value heads (grouped-query attention when fewer than `headCount`).
    public var headCountKV: Int
    /// The context the model was trained for.
    public var contextLength: Int
    /// RMSNorm epsilon.
    public var rmsEpsilon: Float
    /// RoPE frequency base.
    public var ropeFrequencyBase: Float
    /// How many dimensions of each head RoPE rotates.
    public var ropeDimensionCount: Int
    /// Vocabulary size.
    public var vocabularySize: Int

    /// Width of one head.
    public var headDimension: Int { embeddingLength / headCount }
    /// Width of the key and value vectors of one position.
    public var kvDimension: Int { headDimension * headCountKV }

    /// Reads the configuration of a `llama` GGUF file; other architectures are refused by name.
    public init(gguf: GGUFFile, vocabularySize: Int) throws(ModelError) {
        let file = gguf.path
        let architecture = gguf.metadata["general.architecture"]?.stringValue ?? "(none)"
        guard architecture == "llama" else {
            throw ModelError(file: file, field: "general.architecture", reason: "architecture \"\(architecture)\" is not supported (only \"llama\" is)")
        }
        func integer(_ key: String, default value: Int? = nil) throws(ModelError) -> Int {
            guard let found = gguf.metadata["llama." + key]?.intValue ?? value else {
                throw ModelError(file: file, field: "llama." + key, reason: "is missing")
            }
            guard found > 0, found <= 1 << 24 else {
                throw ModelError(file: file, field: "llama." + key, reason: "\(found) is out of range")
            }
            return found
        }
        func number(_ key: String, default value: Double) throws(ModelError) -> Float {
            let found = gguf.metadata["llama." + key]?.doubleValue ?? value
            guard found.isFinite, found > 0 else {
                throw ModelError(file: file, field: "llama." + key, reason: "\(found) is not a positive number")
            }
            return Float(found)
        }
        embeddingLength = try integer("embedding_length")
        blockCount = try integer("block_count")
        feedForwardLength = try integer("feed_forward_length")
        headCount = try integer("attention.head_count")
        headCountKV = try integer("attention.head_count_kv", default: headCount)
        contextLength = try integer("context_length", default: 2048)
        rmsEpsilon = try number("attention.layer_norm_rms_epsilon", default: 1e-5)
        ropeFrequencyBase = try number("rope.freq_base", default: 10_000)
        guard embeddingLength % headCount == 0 else {
            throw ModelError(file: file, field: "llama.attention.head_count", reason: "\(headCount) heads do not divide the embedding length \(embeddingLength)")
        }
        guard headCount % headCountKV == 0 else {
            throw ModelError(file: file, field: "llama.attention.head_count_kv", reason: "\(headCountKV) key/value heads do not divide \(headCount) query heads")
        }
        ropeDimensionCount = try integer("rope.dimension_count", default: embeddingLength / headCount)
        guard ropeDimensionCount <= embeddingLength / headCount, ropeDimensionCount % 2 == 0 else {
            throw ModelError(file: file, field: "llama.rope.dimension_count", reason: "\(ropeDimensionCount) must be even and at most the head width \(embeddingLength / headCount)")
        }
        self.vocabularySize = vocabularySize
    }
}
