import GGUF

/// What a model's forward pass asks of the device that computes it: matrix products, norms and
/// elementwise steps, RoPE, the KV cache's writes and attention over it, and the recurrent
/// mixers' scans. The architectures' stages call these and nothing else; `CPUCompute` is the
/// implementation on this module's C kernels, and another device is one more module with a type
/// that conforms.
///
/// Every operation works on rows of floats (`[row][width]`, row-major) in buffers the backend
/// made (`makeBuffer`: the session's activations, KV cache and recurrent states) — host memory,
/// which a unified-memory GPU maps without a copy — and returns when its results are written. One
/// instance serves one session's forward passes, one at a time: it owns that session's working
/// memory for products and attention.
package protocol ComputeBackend: AnyObject {
    /// How many threads a product is split across.
    var threads: Int { get }
    /// Whether a batch is computed as its tokens one at a time would be, bit for bit (each
    /// product the one-token kernel, attention one query at a time): so the tokens speculative
    /// decoding verifies get exactly the logits decoding them one by one gives.
    var tokenByToken: Bool { get set }
    /// Bytes of working memory it allocated.
    var byteCount: Int { get }
    /// A backend for another session whose passes never run at the same time as this one's (a
    /// draft model's beside its target's): on the same threads, so that the two do not compete,
    /// with working memory of its own for rows up to `widest` floats, batches of `batchCapacity`
    /// and caches of `contextLength`.
    func sharingThreads(widest: Int, batchCapacity: Int, contextLength: Int, activations: ActivationPrecision) -> any ComputeBackend

    /// A buffer of `bytes` for the session's forward passes, zeroed when `zeroed` (else its pages
    /// take memory only when written).
    func makeBuffer(bytes: Int, zeroed: Bool) -> any DeviceBuffer

    /// `output[t][r] = matrix[r] · input[t]` for `count` input rows.
    func multiply(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int)
    /// `multiply` with each token as one token is multiplied, then each row times `scale` (when
    /// given) plus each term's `factor · B (A x)`, added by the thread that wrote the row while it
    /// is in that thread's cache (LoRA adapters' products): each row the same to the bit as the
    /// product, `scale`, then each term's product, `scale` and `add` apart.
    func multiplyEachToken(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int,
                           scale: Float?, adding terms: [LowRankTerm])
    /// Whether `multiplyEachToken` can add a term whose B is `matrix`.
    func addsLowRankTerms(of matrix: Matrix) -> Bool

    /// `output[t] = x[t] / rms(x[t]) * weights` for `count` rows of `width` (`output` may be `x`).
    func rmsNorm(_ x: UnsafeMutablePointer<Float>, weights: [Float], epsilon: Float, into output: UnsafeMutablePointer<Float>, count: Int, width: Int)
    /// `x *= factor` over `count` floats.
    func scale(_ x: UnsafeMutablePointer<Float>, by factor: Float, count: Int)
    /// `x += delta` over `count` floats.
    func add(_ delta: UnsafeMutablePointer<Float>, to x: UnsafeMutablePointer<Float>, count: Int)
    /// Adds `bias` to each of `count` rows (`bias.count` wide) of `x`.
    func addBias(_ bias: [Float], to x: UnsafeMutablePointer<Float>, count: Int)
    /// `cap · tanh(x / cap)` over `count` floats (Gemma's final logit softcapping).
    func softcap(_ x: UnsafeMutablePointer<Float>, cap: Float, count: Int)
    /// `gate = act(gate) ⊙ up` over `count` floats.
    func activate(_ activation: GatedActivation, gate: UnsafeMutablePointer<Float>, up: UnsafeMutablePointer<Float>, count: Int)
    /// Each token's row of `embedding` into `x` (`width` floats a token).
    func embed(_ tokens: [Int32], from embedding: Matrix, into x: UnsafeMutablePointer<Float>, width: Int)
    /// `x = (x + delta · factor) · scale` over `count` floats.
    func addScaled(_ delta: UnsafeMutablePointer<Float>, by factor: Float, to x: UnsafeMutablePointer<Float>, thenScaleBy scale: Float, count: Int)
    /// `x *= sigmoid(gates)` over `count` floats.
    func sigmoidGate(_ x: UnsafeMutablePointer<Float>, by gates: UnsafeMutablePointer<Float>, count: Int)
    /// `output = a ⊙ b` for `count` rows of `width` floats, each operand's rows its own stride
    /// apart (`output` may be `a` or `b`, at the same stride).
    func multiplyElementwise(_ a: UnsafeMutablePointer<Float>, stride aStride: Int, _ b: UnsafeMutablePointer<Float>, stride bStride: Int,
                             into output: UnsafeMutablePointer<Float>, stride outputStride: Int, width: Int, count: Int)
    /// Copies `count` rows of `width` floats from `source` (rows `sourceStride` apart) to
    /// `target` (rows `targetStride` apart).
    func copyRows(_ source: UnsafeMutablePointer<Float>, stride sourceStride: Int, into target: UnsafeMutablePointer<Float>, stride targetStride: Int,
                  width: Int, count: Int)
    /// `target[i] = source[rows[i]]`, rows of `width` floats.
    func gatherRows(_ source: UnsafeMutablePointer<Float>, rows: [Int], width: Int, into target: UnsafeMutablePointer<Float>)
    /// `target[rows[i]] = source[i]`, rows of `width` floats.
    func scatterRows(_ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, rows: [Int], width: Int)

    /// A mixture of experts' routing of `count` rows from the router's `scores` (`[row][expert]`,
    /// overwritten with the probabilities): each row's `used` experts, most probable first by
    /// probability plus `selectionBias`, and their weights.
    func route(_ scores: UnsafeMutablePointer<Float>, count: Int, experts: Int, used: Int, gating: ExpertGating, selectionBias: [Float]?) -> ExpertRouting
    /// Each row of a mixture's output: its experts' outputs (`[row][slot][width]`) times their
    /// weights, summed in the order they were chosen; then, when given, the shared expert's row
    /// times its gate.
    func combineExperts(_ outputs: UnsafeMutablePointer<Float>, routing: ExpertRouting, shared: (rows: UnsafeMutablePointer<Float>, gates: [Float])?,
                        into output: UnsafeMutablePointer<Float>, count: Int, width: Int)
    /// sigmoid(`vector` · row) for each of `count` rows of `x` (a shared expert's gates).
    func sigmoidOfDots(_ vector: [Float], _ x: UnsafeMutablePointer<Float>, count: Int) -> [Float]

    /// Rotates the dimension pairs of each of `heads` heads of `count` rows (`width` floats
    /// apart) by each row's angles (`[row][pair]` cosines and sines).
    func rotate(_ rows: UnsafeMutablePointer<Float>, count: Int, width: Int, heads: Int, rotation: RoPERotation,
                cosines: UnsafeMutablePointer<Float>, sines: UnsafeMutablePointer<Float>)
    /// Writes `count` rows of keys and of values (`[row][kv head][head width]`, `heads` heads)
    /// into `cache`, at each row's place.
    func store(keys: UnsafeMutablePointer<Float>, values: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, heads: Int, headWidth: Int,
               in cache: KVCacheLayer)
    /// Causal attention of `count` rows of queries (`[row][head][head width]`) over their
    /// sequences' cached keys and values into `output` (the same layout).
    func attend(_ queries: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, shape: AttentionShape, cache: KVCacheLayer,
                into output: UnsafeMutablePointer<Float>)
    /// Each head's attention probabilities of `count` rows of queries, `[row][head][key]` with
    /// rows of `cache.geometry.contextLength` (zero outside the attended positions).
    func attentionProbabilities(_ queries: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, shape: AttentionShape,
                                cache: KVCacheLayer) -> [Float]

    /// A short causal convolution (ggml's `ssm_conv`) of the first `channels` floats of `count`
    /// rows (`stride` apart), in place, continuing each row's sequence's kept inputs in `states`.
    func convolve(_ rows: UnsafeMutablePointer<Float>, stride: Int, channels: Int, count: Int, places: RowPlaces,
                  convolution: CausalConvolutionWeights, states: RecurrentStates)
    /// Gated DeltaNet's scan (ggml's `gated_delta_net`) over `count` rows of mixed queries, keys
    /// and values, continuing each row's sequence's state in `states`, into `output`
    /// (`[row][value head][value head width]`).
    func deltaRule(_ mixed: UnsafeMutablePointer<Float>, gates: DeltaRuleGates, count: Int, places: RowPlaces, shape: DeltaRuleShape,
                   states: RecurrentStates, into output: UnsafeMutablePointer<Float>)
}

/// How a gate meets its up product in a gated feed-forward.
package enum GatedActivation: Sendable {
    /// silu(gate) ⊙ up.
    case swiGLU
    /// gpt-oss's clamped SwiGLU (`ggml_swiglu_oai`, α 1.702, limit 7): g = min(gate, 7),
    /// g · sigmoid(1.702 g) ⊙ (clamp(up, −7, 7) + 1).
    case clampedSwiGLU
    /// gelu(gate) ⊙ up (GELU's tanh approximation).
    case geGLU
}

/// How a mixture's router scores become expert probabilities (llama.cpp's `expert_gating_func`,
/// whose numbers are the raw values).
public enum ExpertGating: Int, Sendable, Equatable {
    /// The softmax over every expert.
    case softmax = 1
    /// Each score's sigmoid (DeepSeek V3's, LFM2-MoE's).
    case sigmoid = 2
}

/// Each row's chosen experts, `[row][slot]` most probable first, and their weights (their
/// probabilities divided by the chosen ones' sum).
package struct ExpertRouting: Sendable {
    package let used: Int
    package var chosen: [Int]
    package var weights: [Float]

    package init(used: Int, chosen: [Int], weights: [Float]) {
        self.used = used
        self.chosen = chosen
        self.weights = weights
    }
}

/// Where each row of a forward pass goes: its sequence, and its position there.
package struct RowPlaces: Sendable {
    /// Each row's sequence.
    package var sequences: [Int] = []
    /// Each row's position in its sequence.
    package var positions: [Int] = []
    /// Whether the rows are consecutive positions of one sequence (a prompt's batch).
    package var oneRun = true

    package init(sequences: [Int] = [], positions: [Int] = [], oneRun: Bool = true) {
        self.sequences = sequences
        self.positions = positions
        self.oneRun = oneRun
    }
}

/// Which dimensions RoPE rotates together in a head.
package struct RoPERotation: Sendable {
    /// Floats of a head.
    package let headWidth: Int
    /// Pairs rotated (from the head's start: a partial rotation leaves the rest).
    package let pairs: Int
    /// Adjacent pairs `(v[2i], v[2i+1])` when true, else the halves `(v[i], v[i + pairs])`.
    package let adjacent: Bool

    package init(headWidth: Int, pairs: Int, adjacent: Bool) {
        self.headWidth = headWidth
        self.pairs = pairs
        self.adjacent = adjacent
    }
}

/// A KV cache's shape: `[sequence][kv head][position][slot]` in each layer's keys and values,
/// a slot of the widest layer's head (a narrower head fills its start).
package struct KVCacheGeometry: Sendable {
    /// Its element type.
    package let type: KVCacheType
    /// KV heads a layer caches room for (the most of any layer).
    package let heads: Int
    /// Positions a sequence holds.
    package let contextLength: Int
    /// Elements of a head's slot at one position.
    package let slotWidth: Int

    package init(type: KVCacheType, heads: Int, contextLength: Int, slotWidth: Int) {
        self.type = type
        self.heads = heads
        self.contextLength = contextLength
        self.slotWidth = slotWidth
    }

    /// Bytes of one head's slot.
    package var slotBytes: Int { type.bytes(values: slotWidth) }
    /// One head's slot in the cache's units (the attention kernels' stride).
    package var slotUnits: Int { slotWidth / type.kernels.unitValues }

    /// Where KV head `kvHead` of `sequence` at `position` starts in a layer's keys or values, in
    /// bytes: each head's positions are contiguous, so attention streams them.
    package func offset(sequence: Int, kvHead: Int, position: Int) -> Int {
        ((sequence * heads + kvHead) * contextLength + position) * slotBytes
    }
}

/// One layer's keys and values in a session's KV cache.
package struct KVCacheLayer {
    package let keys, values: UnsafeMutableRawPointer
    package let geometry: KVCacheGeometry

    package init(keys: UnsafeMutableRawPointer, values: UnsafeMutableRawPointer, geometry: KVCacheGeometry) {
        self.keys = keys
        self.values = values
        self.geometry = geometry
    }
}

/// What attention of one layer computes over: its heads and their width, its scale, its window
/// and its sinks.
package struct AttentionShape: Sendable {
    package let heads, kvHeads, headWidth: Int
    /// The scores' factor (1/√width unless the model says otherwise).
    package let scale: Float
    /// The positions a query sees when the layer slides: those less than `window` before it.
    package let window: Int?
    /// Each query head's attention sink (gpt-oss's): one more score in its softmax, which
    /// attends to nothing.
    package let sinks: [Float]?

    package init(heads: Int, kvHeads: Int, headWidth: Int, scale: Float, window: Int?, sinks: [Float]?) {
        self.heads = heads
        self.kvHeads = kvHeads
        self.headWidth = headWidth
        self.scale = scale
        self.window = window
        self.sinks = sinks
    }

    /// Floats of a row of queries.
    package var queryWidth: Int { heads * headWidth }
}

/// Each sequence's recurrent state in one layer: `sequenceStride` floats apart from `base`
/// (zeroed by the first pass at position 0).
package struct RecurrentStates {
    package let base: UnsafeMutablePointer<Float>
    package let sequenceStride: Int

    package init(base: UnsafeMutablePointer<Float>, sequenceStride: Int) {
        self.base = base
        self.sequenceStride = sequenceStride
    }

    /// The state of `sequence`.
    package func of(_ sequence: Int) -> UnsafeMutablePointer<Float> { base + sequence * sequenceStride }
}

/// A short causal convolution's weights: a row of `width` per channel, and whether its outputs
/// go through SiLU (Gated DeltaNet's) or are left as they are (LFM2's).
package struct CausalConvolutionWeights: Sendable {
    package let weights: [Float]
    package let width: Int
    package let silu: Bool

    package init(weights: [Float], width: Int, silu: Bool) {
        self.weights = weights
        self.width = width
        self.silu = silu
    }
}

/// Gated DeltaNet's heads: `keyHeads` query/key heads of `keyHeadWidth`, `valueHeads` value heads
/// of `valueHeadWidth` (each key head serving `valueHeads / keyHeads` of them), the mixed row
/// being queries, keys, then values.
package struct DeltaRuleShape: Sendable {
    package let keyHeads, valueHeads, keyHeadWidth, valueHeadWidth: Int
    /// Added to Σx² in the queries' and keys' L2 normalization.
    package let epsilon: Float
    /// Floats of a mixed row (`stride`), and where its kept convolution inputs end in a state.
    package let stride, stateOffset: Int

    package init(keyHeads: Int, valueHeads: Int, keyHeadWidth: Int, valueHeadWidth: Int, epsilon: Float, stride: Int, stateOffset: Int) {
        self.keyHeads = keyHeads
        self.valueHeads = valueHeads
        self.keyHeadWidth = keyHeadWidth
        self.valueHeadWidth = valueHeadWidth
        self.epsilon = epsilon
        self.stride = stride
        self.stateOffset = stateOffset
    }
}

/// Gated DeltaNet's per-head gates for each row, `[row][value head]`, as the products give them
/// (before the sigmoid and softplus the scan applies), with the decay's bias and rate.
package struct DeltaRuleGates {
    package let strengths, decays: UnsafeMutablePointer<Float>
    package let decayBias, decayRate: [Float]

    package init(strengths: UnsafeMutablePointer<Float>, decays: UnsafeMutablePointer<Float>, decayBias: [Float], decayRate: [Float]) {
        self.strengths = strengths
        self.decays = decays
        self.decayBias = decayBias
        self.decayRate = decayRate
    }
}

/// Memory a `ComputeBackend`'s operations read and write, which the backend allocated
/// (`makeBuffer`): host memory, addressable by the CPU — a unified-memory GPU's shared buffer would
/// be one. Freed when the last reference to it goes.
package protocol DeviceBuffer: AnyObject {
    /// Where its bytes start (64-byte aligned).
    var contents: UnsafeMutableRawPointer { get }
    /// How many bytes it holds.
    var byteCount: Int { get }
}

extension DeviceBuffer {
    /// Its bytes as `count` floats.
    package func floats(_ count: Int) -> UnsafeMutablePointer<Float> {
        contents.bindMemory(to: Float.self, capacity: count)
    }
}

/// A low-rank product added to a projection's rows as they are computed
/// (`ComputeBackend.multiplyEachToken(_:_:into:count:scale:adding:)`): a LoRA adapter's
/// `factor · B (A x)`, its `A x` already computed for each token.
package struct LowRankTerm {
    /// B's rows for the projection's output rows (from its first), a column per rank.
    package let b: Matrix
    /// `A x` of each token, `[token][rank]`.
    package let lowRanks: UnsafeMutablePointer<Float>
    /// What each `B (A x)` is multiplied by (the adapter's scale × alpha / rank).
    package let factor: Float

    package init(b: Matrix, lowRanks: UnsafeMutablePointer<Float>, factor: Float) {
        self.b = b
        self.lowRanks = lowRanks
        self.factor = factor
    }
}
