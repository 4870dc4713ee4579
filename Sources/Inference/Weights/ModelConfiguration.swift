import CPUBackend
import GGUF

/// The shape of a model, read from GGUF metadata under its architecture's prefix (`llama.`,
/// `gemma3.`, …), with what the architecture fixes besides (RoPE style, sliding windows).
public struct ModelConfiguration: Sendable, Equatable {
    /// How RoPE pairs a head's dimensions.
    public enum RoPEStyle: Sendable, Equatable {
        /// Adjacent pairs `(x[2i], x[2i+1])` (llama.cpp's "normal" mode).
        case adjacent
        /// The two halves `(x[i], x[i + d/2])` (llama.cpp's "NeoX" mode).
        case halves
    }

    /// `general.architecture`.
    public var architecture: String
    /// Width of the residual stream.
    public var embeddingLength: Int
    /// Number of transformer blocks.
    public var blockCount: Int
    /// Width of the feed-forward hidden layer.
    public var feedForwardLength: Int
    /// Number of query heads.
    public var headCount: Int
    /// Number of key/value heads (grouped-query attention when fewer than `headCount`): the most
    /// of any layer when layers differ (`layerHeadCountsKV`).
    public var headCountKV: Int
    /// Width of one head (`attention.key_length`, else embedding length / heads): of the
    /// full-attention layers when sliding ones differ (`slidingHeadDimension`).
    public var headDimension: Int
    /// Each layer's key/value heads when the file gives them per layer and they differ (Gemma 4's
    /// full layers have fewer); empty when every attention layer has `headCountKV`.
    public var layerHeadCountsKV: [Int] = []
    /// Each layer's feed-forward width when the file gives them per layer and they differ (Gemma
    /// 4 E2B's wider ones); empty when every layer's is `feedForwardLength` (then the widest).
    public var layerFeedForwardLengths: [Int] = []
    /// The head width of sliding-window layers when it differs (`attention.key_length_swa`).
    public var slidingHeadDimension: Int?
    /// The dimensions RoPE rotates in sliding-window layers when they differ
    /// (`rope.dimension_count_swa`).
    public var slidingRopeDimensionCount: Int?
    /// The last layers that compute no keys and values of their own but attend over an earlier
    /// layer's (`attention.shared_kv_layers`; `cacheLayer`).
    public var sharedKVLayers = 0
    /// The context the model was trained for.
    public var contextLength: Int
    /// RMSNorm epsilon.
    public var rmsEpsilon: Float
    /// RoPE frequency base (of the global-attention layers, when some layers slide).
    public var ropeFrequencyBase: Float
    /// How many dimensions of each head RoPE rotates.
    public var ropeDimensionCount: Int
    /// How RoPE pairs dimensions.
    public var ropeStyle: RoPEStyle = .adjacent
    /// The context RoPE was trained for (`rope.scaling.original_context_length`, else the context
    /// length): a session longer than it takes the long RoPE factors when the file has them.
    public var ropeOriginalContextLength: Int
    /// How RoPE is stretched past the trained context (linear or YaRN), if at all.
    public var ropeScaling: RoPEScaling = .unscaled
    /// Vocabulary size.
    public var vocabularySize: Int
    /// What attention scores are multiplied by.
    public var attentionScale: Float
    /// Sliding-window layers see only the last `slidingWindow` positions (llama.cpp's `n_swa`).
    public var slidingWindow: Int?
    /// Which layers attend over the sliding window (llama.cpp's `swa_layers`); none unless the
    /// architecture says (`setSlidingWindowPattern`).
    public var slidingLayers: [Bool] = []
    /// The RoPE base of sliding-window layers, when it differs (llama.cpp's
    /// `rope_freq_base_train_swa`).
    public var slidingRopeFrequencyBase: Float?
    /// The routed experts of a mixture-of-experts model's feed-forward (`expert_count`,
    /// `expert_used_count`, `expert_feed_forward_length`), nil for a dense model.
    public var experts: Experts?

    /// The recurrent layers of a hybrid model (Qwen3.5's Gated DeltaNet, LFM2's short
    /// convolutions), nil for a model of attention layers only; `recurrentLayers` says which
    /// layers they are.
    public var recurrence: Recurrence?
    /// Which layers are recurrent rather than attention (llama.cpp's `is_recr`).
    public var recurrentLayers: [Bool] = []
    /// The layers before the first mixture of experts, whose feed-forward is dense
    /// (`leading_dense_block_count`, read by the architectures whose graph takes it: LFM2-MoE's).
    public var leadingDenseLayers = 0

    /// A recurrent layer's shape: a short causal convolution, and the gated delta rule's heads
    /// when the layer has them.
    public struct Recurrence: Sendable, Equatable {
        /// Inputs the short convolution sees, the current one included (`ssm.conv_kernel`,
        /// `shortconv.l_cache`).
        public var convolutionWidth: Int
        /// Channels the convolution mixes.
        public var convolutionChannels: Int
        /// The delta rule's heads (Gated DeltaNet), nil for a convolution alone (LFM2).
        public var deltaRule: DeltaRule?

        /// Floats of one layer's state for one sequence: the convolution's last inputs, then each
        /// value head's key × value matrix.
        public var stateFloats: Int { (convolutionWidth - 1) * convolutionChannels + (deltaRule?.stateFloats ?? 0) }
        /// What the layer is, for messages.
        public var kind: String { deltaRule == nil ? "short convolution" : "Gated DeltaNet" }
    }

    /// A Gated DeltaNet layer's heads (llama.cpp's `ssm.*` keys).
    public struct DeltaRule: Sendable, Equatable {
        /// Key heads (`ssm.group_count`) and value heads (`ssm.time_step_rank`).
        public var keyHeads, valueHeads: Int
        /// Width of a key head (`ssm.state_size`) and of a value head (`ssm.inner_size` / value heads).
        public var keyHeadDimension, valueHeadDimension: Int

        /// Width of all key heads together (queries and keys each).
        public var keyDimension: Int { keyHeads * keyHeadDimension }
        /// Width of all value heads together (`ssm.inner_size`).
        public var valueDimension: Int { valueHeads * valueHeadDimension }
        /// Channels the convolution mixes: queries, keys and values.
        public var channels: Int { 2 * keyDimension + valueDimension }
        /// Floats of each value head's key × value matrix.
        public var stateFloats: Int { valueHeads * keyHeadDimension * valueHeadDimension }
    }

    /// Whether `layer` is recurrent.
    public func isRecurrent(layer: Int) -> Bool {
        recurrentLayers.indices.contains(layer) && recurrentLayers[layer]
    }

    /// A mixture of experts' shape.
    public struct Experts: Sendable, Equatable {
        /// Experts per layer.
        public var count: Int
        /// Experts each token is routed to (llama.cpp's `n_expert_used`).
        public var used: Int
        /// Width of one expert's hidden layer.
        public var feedForwardLength: Int
        /// Width of the shared expert's hidden layer, when the file has a shared expert
        /// (`expert_shared_feed_forward_length`, else the feed-forward length).
        public var sharedFeedForwardLength: Int
        /// How the router's scores become probabilities (`expert_gating_func`, read by the
        /// architectures whose graph takes it from the file).
        public var gating: ExpertGating = .softmax
        /// Whether the experts run beside each layer's dense feed-forward rather than in its
        /// place (Gemma 4's).
        public var besideDense = false
    }

    /// Width of all query heads together.
    public var queryDimension: Int { headDimension * headCount }
    /// Width of the key and value vectors of one position.
    public var kvDimension: Int { headDimension * headCountKV }

    /// The configuration as layer `index` sees it: its head width, key/value heads, rotated
    /// dimensions and feed-forward width where layers differ (llama.cpp's per-layer
    /// `n_embd_head_k(il)`, `n_head_kv(il)`, `n_rot(il)`, `n_ff(il)`). Attention and the
    /// feed-forward of a layer are computed with it.
    public func layer(_ index: Int) -> ModelConfiguration {
        var view = self
        if slides(layer: index) {
            if let slidingHeadDimension { view.headDimension = slidingHeadDimension }
            if let slidingRopeDimensionCount { view.ropeDimensionCount = slidingRopeDimensionCount }
        }
        if layerHeadCountsKV.indices.contains(index), layerHeadCountsKV[index] > 0 { view.headCountKV = layerHeadCountsKV[index] }
        if layerFeedForwardLengths.indices.contains(index), layerFeedForwardLengths[index] > 0 {
            view.feedForwardLength = layerFeedForwardLengths[index]
        }
        return view
    }

    /// The widest head of any layer: a KV cache slot's width.
    public var widestHeadDimension: Int { max(headDimension, slidingHeadDimension ?? 0) }
    /// The widest query heads together of any layer.
    public var widestQueryDimension: Int { headCount * widestHeadDimension }
    /// The most dimensions RoPE rotates in any layer.
    public var widestRopeDimensionCount: Int { max(ropeDimensionCount, slidingRopeDimensionCount ?? 0) }
    /// Whether some layers' heads are narrower than the full layers' (`headDimension`).
    public var headWidthsDiffer: Bool { slidingHeadDimension.map { $0 != headDimension } ?? false }

    /// The layer whose keys and values `layer` attends over: itself, or for the last
    /// `sharedKVLayers` layers the last earlier layer that slides as it does (llama.cpp's reuse
    /// of `n_layer_kv_from_start - 2` or `- 1`).
    public func cacheLayer(_ layer: Int) -> Int {
        let first = blockCount - sharedKVLayers
        guard layer >= first else { return layer }
        return first - (slides(layer: layer) ? 2 : 1)
    }

    /// The widest feed-forward hidden layer: the dense one's or an expert's.
    public var widestFeedForward: Int { max(feedForwardLength, experts?.feedForwardLength ?? 0, experts?.sharedFeedForwardLength ?? 0) }

    /// Refuses a file of a mixture-of-experts architecture that declares no experts.
    func requireExperts(gguf: GGUFFile) throws(ModelError) {
        guard experts == nil else { return }
        throw ModelError(file: gguf.path, field: architecture + ".expert_count", reason: "is missing: a \(architecture) model has experts")
    }

    /// Integer key `key` under the architecture's prefix (`qwen35.ssm.group_count`), which an
    /// architecture's `configure` reads: from `minimum` to 2^24, required.
    func integer(_ key: String, in gguf: GGUFFile, minimum: Int = 1) throws(ModelError) -> Int {
        let field = architecture + "." + key
        guard let value = gguf.metadata[field]?.intValue else { throw ModelError(file: gguf.path, field: field, reason: "is missing") }
        guard value >= minimum, value <= 1 << 24 else { throw ModelError(file: gguf.path, field: field, reason: "\(value) is out of range") }
        return value
    }

    /// Whether `layer` attends over a sliding window.
    public func slides(layer: Int) -> Bool {
        slidingWindow != nil && slidingLayers.indices.contains(layer) && slidingLayers[layer]
    }

    /// Makes every `period`-th layer (the last of each period) attend globally and the others
    /// slide, as llama.cpp's `set_swa_pattern`.
    mutating func setSlidingWindowPattern(period: Int) {
        slidingLayers = (0..<blockCount).map { $0 % period < period - 1 }
    }

    /// Which layers slide, as llama.cpp's `load_swa_pattern` reads `attention.sliding_window_pattern`:
    /// a flag per layer, or a period (`defaultPeriod` without the key).
    mutating func readSlidingWindowPattern(gguf: GGUFFile, defaultPeriod: Int) throws(ModelError) {
        let key = architecture + ".attention.sliding_window_pattern"
        let pattern = gguf.metadata[key]
        if let flags = pattern?.arrayValue {
            guard flags.count == blockCount else {
                throw ModelError(file: gguf.path, field: key, reason: "has \(flags.count) entries for \(blockCount) layers")
            }
            slidingLayers = flags.map { if case .bool(true) = $0 { true } else { $0.intValue == 1 } }
        } else {
            setSlidingWindowPattern(period: pattern?.intValue.flatMap { $0 > 0 ? $0 : nil } ?? defaultPeriod)
        }
    }

    /// Reads the configuration of a GGUF file whose architecture Lumen runs; any other is refused
    /// by name.
    public init(gguf: GGUFFile, vocabularySize: Int) throws(ModelError) {
        let file = gguf.path
        let architecture = gguf.metadata["general.architecture"]?.stringValue ?? "(none)"
        guard let kind = Architectures.named(architecture) else {
            throw ModelError(file: file, field: "general.architecture",
                             reason: "architecture \"\(architecture)\" is not supported (\(Architectures.names) are)")
        }
        let prefix = architecture + "."
        func integer(_ key: String, default value: Int? = nil) throws(ModelError) -> Int {
            guard let found = gguf.metadata[prefix + key]?.intValue ?? value else {
                throw ModelError(file: file, field: prefix + key, reason: "is missing")
            }
            guard found > 0, found <= 1 << 24 else {
                throw ModelError(file: file, field: prefix + key, reason: "\(found) is out of range")
            }
            return found
        }
        // A count per layer (LFM2's head counts, 0 in its convolution layers; Gemma 4's key/value
        // heads) gives the most of any layer, and each layer's when the layers that have one differ.
        func layerIntegers(_ key: String, layers: Int, default value: Int? = nil) throws(ModelError) -> (most: Int, perLayer: [Int]) {
            guard let entries = gguf.metadata[prefix + key]?.arrayValue else { return (try integer(key, default: value), []) }
            let counts = entries.map { $0.intValue ?? -1 }
            guard counts.count == layers, counts.allSatisfy({ (0...(1 << 24)).contains($0) }), let most = counts.max(), most > 0 else {
                throw ModelError(file: file, field: prefix + key, reason: "\(entries.count) entries are not a count (or 0) for each of \(layers) layers")
            }
            return (most, Set(counts).subtracting([0]).count > 1 ? counts : [])
        }
        func number(_ key: String, default value: Double) throws(ModelError) -> Float {
            let found = gguf.metadata[prefix + key]?.doubleValue ?? value
            guard found.isFinite, found > 0 else {
                throw ModelError(file: file, field: prefix + key, reason: "\(found) is not a positive number")
            }
            return Float(found)
        }
        self.architecture = architecture
        embeddingLength = try integer("embedding_length")
        let layers = try integer("block_count")
        blockCount = layers
        (feedForwardLength, layerFeedForwardLengths) = try layerIntegers("feed_forward_length", layers: layers)
        let heads = try layerIntegers("attention.head_count", layers: layers)
        guard heads.perLayer.isEmpty else {
            throw ModelError(file: file, field: prefix + "attention.head_count", reason: "query heads that differ between layers are not supported")
        }
        headCount = heads.most
        (headCountKV, layerHeadCountsKV) = try layerIntegers("attention.head_count_kv", layers: layers, default: headCount)
        contextLength = try integer("context_length", default: 2048)
        rmsEpsilon = try number("attention.layer_norm_rms_epsilon", default: 1e-5)
        ropeFrequencyBase = try number("rope.freq_base", default: 10_000)
        guard gguf.metadata[prefix + "attention.key_length"] != nil || embeddingLength % headCount == 0 else {
            throw ModelError(file: file, field: prefix + "attention.head_count", reason: "\(headCount) heads do not divide the embedding length \(embeddingLength)")
        }
        headDimension = try integer("attention.key_length", default: embeddingLength / headCount)
        let queryHeads = headCount
        if let kvHeads = ([headCountKV] + layerHeadCountsKV).first(where: { $0 > 0 && queryHeads % $0 != 0 }) {
            throw ModelError(file: file, field: prefix + "attention.head_count_kv", reason: "\(kvHeads) key/value heads do not divide \(headCount) query heads")
        }
        ropeDimensionCount = try integer("rope.dimension_count", default: headDimension)
        let original = gguf.metadata[prefix + "rope.scaling.original_context_length"]?.intValue ?? 0
        ropeOriginalContextLength = original > 0 ? try integer("rope.scaling.original_context_length") : contextLength
        guard ropeDimensionCount <= headDimension, ropeDimensionCount % 2 == 0 else {
            throw ModelError(file: file, field: prefix + "rope.dimension_count", reason: "\(ropeDimensionCount) must be even and at most the head width \(headDimension)")
        }
        ropeScaling = try RoPEScaling(gguf: gguf, prefix: prefix, originalContextLength: ropeOriginalContextLength)
        attentionScale = 1 / Float(headDimension).squareRoot()
        self.vocabularySize = vocabularySize
        // A window of 0 is none, as llama.cpp reads it.
        if let window = gguf.metadata[prefix + "attention.sliding_window"]?.intValue, window != 0 {
            slidingWindow = try integer("attention.sliding_window")
        }
        if let count = gguf.metadata[prefix + "expert_count"]?.intValue, count > 0 {
            let used = try integer("expert_used_count")
            guard used <= count else {
                throw ModelError(file: file, field: prefix + "expert_used_count", reason: "\(used) experts per token of \(count)")
            }
            // Without its own width (no key, or 0), an expert is the dense width shared among those
            // used (llama.cpp's default).
            let ownWidth = gguf.metadata[prefix + "expert_feed_forward_length"]?.intValue ?? 0
            let width = ownWidth == 0 ? feedForwardLength / used : try integer("expert_feed_forward_length")
            let sharedWidth = gguf.metadata[prefix + "expert_shared_feed_forward_length"]?.intValue ?? 0
            experts = Experts(count: count, used: used, feedForwardLength: width,
                              sharedFeedForwardLength: sharedWidth == 0 ? feedForwardLength : try integer("expert_shared_feed_forward_length"))
        }
        try kind.configure(&self, gguf: gguf)
    }
}
