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
    /// of any layer when layers differ (`layerShapes`).
    public var headCountKV: Int
    /// Width of one head (`attention.key_length`, else embedding length / heads): of the
    /// full-attention layers when sliding ones differ (`layerShapes`).
    public var headDimension: Int
    /// Each layer's own shape, the one table of how layers differ (llama.cpp's per-layer
    /// `n_head_kv(il)`, `n_embd_head_k(il)`, `n_rot(il)`, `n_ff(il)`, `swa_layers`,
    /// `recurrent_layer_arr` and the cache a layer reads): filled from the file's per-layer
    /// arrays, then by the architecture's `configure`. `layer(_:)` views the model through it.
    public var layerShapes: [LayerShape]
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
    /// The RoPE base of sliding-window layers, when it differs (llama.cpp's
    /// `rope_freq_base_train_swa`).
    public var slidingRopeFrequencyBase: Float?
    /// The routed experts of a mixture-of-experts model's feed-forward (`expert_count`,
    /// `expert_used_count`, `expert_feed_forward_length`), nil for a dense model.
    public var experts: Experts?

    /// The recurrent layers of a hybrid model (Qwen3.5's Gated DeltaNet, LFM2's short
    /// convolutions), nil for a model of attention layers only; `LayerShape.isRecurrent` says
    /// which layers they are.
    public var recurrence: Recurrence?
    /// The layers before the first mixture of experts, whose feed-forward is dense
    /// (`leading_dense_block_count`, read by the architectures whose graph takes it: LFM2-MoE's).
    public var leadingDenseLayers = 0

    /// One layer's shape: where it may differ from the model's (`headCountKV`, `headDimension`,
    /// `ropeDimensionCount`, `feedForwardLength`), how it attends and whose keys and values.
    public struct LayerShape: Sendable, Equatable {
        /// Its key/value heads (Gemma 4's full layers have fewer).
        public var headCountKV: Int
        /// Its heads' width (Gemma 4's sliding layers' `attention.key_length_swa`).
        public var headDimension: Int
        /// The dimensions RoPE rotates in its heads (Gemma 4's sliding layers'
        /// `rope.dimension_count_swa`).
        public var ropeDimensionCount: Int
        /// Its feed-forward hidden width (Gemma 4 E2B's wider ones).
        public var feedForwardLength: Int
        /// Whether it attends over the sliding window when the model has one (llama.cpp's
        /// `swa_layers`; `ModelConfiguration.slides(layer:)`).
        public var slides = false
        /// Whether it is recurrent rather than attention (llama.cpp's `is_recr`).
        public var isRecurrent = false
        /// The layer whose keys and values it attends over: itself, or an earlier layer's
        /// (Gemma 4's last layers, `attention.shared_kv_layers`).
        public var cacheLayer: Int
    }

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
        layerShapes.indices.contains(layer) && layerShapes[layer].isRecurrent
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
        guard layerShapes.indices.contains(index) else { return self }
        let shape = layerShapes[index]
        var view = self
        view.headCountKV = shape.headCountKV
        view.headDimension = shape.headDimension
        view.ropeDimensionCount = shape.ropeDimensionCount
        view.feedForwardLength = shape.feedForwardLength
        return view
    }

    /// The widest head of any layer: a KV cache slot's width.
    public var widestHeadDimension: Int { layerShapes.reduce(headDimension) { max($0, $1.headDimension) } }
    /// The widest query heads together of any layer.
    public var widestQueryDimension: Int { headCount * widestHeadDimension }
    /// The most dimensions RoPE rotates in any layer.
    public var widestRopeDimensionCount: Int { layerShapes.reduce(ropeDimensionCount) { max($0, $1.ropeDimensionCount) } }
    /// Whether some layers' heads are narrower than the full layers' (`headDimension`).
    public var headWidthsDiffer: Bool { layerShapes.contains { $0.headDimension != headDimension } }
    /// The widths of the heads the layers cache, each once, in order.
    public var headWidths: [Int] {
        ([headDimension] + layerShapes.map(\.headDimension)).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
    /// Whether a KV cache of `cacheType` holds this model's heads: their widths are multiples of
    /// its unit (a Q8_0 cache's 32-value blocks).
    public func fits(_ cacheType: KVCacheType) -> Bool { headWidths.allSatisfy { $0 % cacheType.valuesPerUnit == 0 } }
    /// Why a KV cache of `cacheType` cannot hold this model's heads (`fits`), for an error.
    public func misfit(_ cacheType: KVCacheType) -> String {
        "a \(cacheType.rawValue) KV cache needs heads a multiple of \(cacheType.valuesPerUnit) values wide; the model's are "
            + headWidths.map(String.init).joined(separator: ", ")
    }
    /// The shape of the first sliding-window layer (every sliding layer's, as the files give
    /// them), nil when no layer slides.
    public var slidingLayerShape: LayerShape? { layerShapes.indices.first(where: slides(layer:)).map { layerShapes[$0] } }

    /// The layer whose keys and values `layer` attends over: itself, or an earlier layer's
    /// (`LayerShape.cacheLayer`).
    public func cacheLayer(_ layer: Int) -> Int {
        layerShapes.indices.contains(layer) ? layerShapes[layer].cacheLayer : layer
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
        slidingWindow != nil && layerShapes.indices.contains(layer) && layerShapes[layer].slides
    }

    /// Sets a flag of every layer's shape (`\.slides`, `\.isRecurrent`), one for each layer.
    mutating func setEachLayer(_ flag: WritableKeyPath<LayerShape, Bool>, to values: [Bool]) {
        for (layer, value) in zip(layerShapes.indices, values) { layerShapes[layer][keyPath: flag] = value }
    }

    /// Makes every `period`-th layer (the last of each period) attend globally and the others
    /// slide, as llama.cpp's `set_swa_pattern`.
    mutating func setSlidingWindowPattern(period: Int) {
        setEachLayer(\.slides, to: (0..<blockCount).map { $0 % period < period - 1 })
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
            setEachLayer(\.slides, to: flags.map { if case .bool(true) = $0 { true } else { $0.intValue == 1 } })
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
        let layerFeedForwardLengths: [Int], layerHeadCountsKV: [Int]
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
        // A layer without a count of its own (0: LFM2's convolution layers) has the model's.
        func own(_ counts: [Int], _ layer: Int, else model: Int) -> Int { counts.indices.contains(layer) && counts[layer] > 0 ? counts[layer] : model }
        let (kvHeads, headWidth, rotated, feedForward) = (headCountKV, headDimension, ropeDimensionCount, feedForwardLength)
        layerShapes = (0..<layers).map { layer in
            LayerShape(headCountKV: own(layerHeadCountsKV, layer, else: kvHeads), headDimension: headWidth, ropeDimensionCount: rotated,
                       feedForwardLength: own(layerFeedForwardLengths, layer, else: feedForward), cacheLayer: layer)
        }
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
