import CPUBackend

/// The mutable part of inference for one session: the KV cache of each of its sequences, the
/// position each has reached, and every scratch buffer a forward pass needs, allocated once so
/// that no token allocates memory — all of it buffers its backend made (`ComputeBackend.makeBuffer`).
///
/// Not `Sendable`: one `ModelSession` actor owns it.
final class InferenceState {
    /// The most tokens the cache of one sequence holds.
    let contextLength: Int
    /// The most tokens one forward pass takes.
    let batchCapacity: Int
    /// How many sequences the cache holds, each `contextLength` tokens.
    let sequenceCapacity: Int
    /// How many tokens are in each sequence's cache.
    var positions: [Int]
    /// How many tokens are in the first sequence's cache: the only one of a session that decodes
    /// one sequence at a time.
    var position: Int {
        get { positions[0] }
        set { positions[0] = newValue }
    }
    /// The sequence each row of the forward pass running belongs to, its position there, and
    /// whether they are consecutive positions of one sequence (`placeRun`, `placeEach`).
    private(set) var places = RowPlaces()
    /// What computes the forward passes: the CPU's threads and kernels (`CPUCompute`), with the
    /// working memory of its products and attention.
    let backend: any ComputeBackend
    /// What looks into every row of the forward passes of the generation running alone now
    /// (`visit`).
    var hooks: [any ForwardHook] = []
    /// What looks into the rows of one sequence of the batch: its generation's hooks, by
    /// sequence (`ModelSession+Batching.swift`).
    var sequenceHooks: [Int: [any ForwardHook]] = [:]
    /// The LoRA adapters every forward pass applies (`useAdapters`), but to the rows of a
    /// sequence that has its own.
    private(set) var adapters = AdapterSet.none
    /// The LoRA adapters of one sequence of the batch, instead of `adapters`: its generation's
    /// own, by sequence (`useAdapters(_:for:)`).
    private(set) var sequenceAdapters: [Int: AdapterSet] = [:]
    /// Room for the adapters' products: `[batch][largest rank]`, then `[batch][widest adapted
    /// weight's rows]`, grown when adapters that need more are used.
    private var adapterRoom: (lowRank: any DeviceBuffer, product: any DeviceBuffer)
    /// `adapterRoom` as floats.
    var adapterBuffers: (lowRank: UnsafeMutablePointer<Float>, product: UnsafeMutablePointer<Float>) {
        (adapterRoom.lowRank.floats(adapterRoom.lowRank.byteCount / 4), adapterRoom.product.floats(adapterRoom.product.byteCount / 4))
    }

    // The forward pass's buffers, row-major, one row per token of the batch (`batch` is at most
    // `batchCapacity`; dim = embedding length, q = the widest layer's query dimension, kv = its
    // key/value dimension, ff = the widest feed-forward length, vocab = vocabulary size):
    /// The residual stream, `[batch][dim]`.
    let residual: UnsafeMutablePointer<Float>
    /// A normed copy of the residual stream, or a block's output before it is added, `[batch][dim]`.
    let normed: UnsafeMutablePointer<Float>
    /// Queries, `[batch][q]` (heads side by side, `headDimension` each).
    let query: UnsafeMutablePointer<Float>
    /// Keys and values before they enter the cache, `[batch][kv]`.
    let key, value: UnsafeMutablePointer<Float>
    /// Attention's output per head, `[batch][q]`.
    let attended: UnsafeMutablePointer<Float>
    /// The feed-forward's gate (then the gated product) and up projections, `[batch][ff]`.
    let gate, up: UnsafeMutablePointer<Float>
    /// The scratch buffers only some stages use (a mixture's, a recurrent layer's, Gemma 4's
    /// per-layer inputs), as the model's stages declared them (`ModelArchitecture.scratch`).
    private let scratchBuffers: [ScratchBuffer: UnsafeMutablePointer<Float>]
    /// Each sequence's recurrent state, `[sequence][recurrent layer][Recurrence.stateFloats]`
    /// (zeroed by the first pass at position 0), and the position it has reached: a recurrent
    /// state cannot go back, so a pass continues it only from there (`continuesRecurrence`).
    let recurrentStates: UnsafeMutablePointer<Float>
    var recurrentPositions: [Int]
    /// Each layer's place among the recurrent layers (nil for an attention layer).
    private let recurrentIndex: [Int?]
    /// Floats of one sequence's recurrent state in one recurrent layer, and over all of them.
    private let recurrentLayerFloats, recurrentFloatsPerSequence: Int
    /// Logits, `[batch][vocab]` (only the last row unless every token's are asked for).
    let logits: UnsafeMutablePointer<Float>
    /// RoPE's cosines and sines for each token of the batch: `[batch][pairs]`.
    let ropeCosines, ropeSines: UnsafeMutablePointer<Float>
    /// The same for sliding-window layers when their RoPE base differs
    /// (`ModelConfiguration.slidingRopeFrequencyBase`); empty otherwise.
    let slidingRopeCosines, slidingRopeSines: UnsafeMutablePointer<Float>
    /// Every layer's keys, and values, one layer `layerStride` bytes after another.
    private let keys, values: UnsafeMutableRawPointer
    /// Bytes of one layer's keys (or values).
    private let layerStride: Int
    /// The cache's element type and layout: a slot of the widest layer's head for each KV head
    /// at each position (a narrower head fills the start of its slot).
    let cacheGeometry: KVCacheGeometry
    /// Layers in the cache.
    private let cachedLayers: Int
    /// Each layer's place in the cache: its own, or the one of the layer whose keys and values it
    /// shares (`ModelConfiguration.cacheLayer`).
    private let cacheSlots: [Int]
    /// The cache's element type.
    var cacheType: KVCacheType { cacheGeometry.type }
    /// The buffers above, which the backend made and this state keeps.
    private let buffers: [any DeviceBuffer]

    /// A state for `model`: caches of `contextLength` tokens for `sequences` sequences, batches up to
    /// `batchCapacity`, its products on `threads` threads — or on the threads of `sharing`, a
    /// state whose forward passes never run at the same time as this one's (a draft model's
    /// beside its target's), so two pools' threads do not compete.
    init(model: LanguageModel, contextLength: Int, batchCapacity: Int, threads: Int,
         activations: ActivationPrecision = .quantized, cacheType: KVCacheType = .f32, sharing: InferenceState? = nil,
         sequences: Int = 1) {
        let configuration = model.configuration
        self.contextLength = contextLength
        sequenceCapacity = max(1, sequences)
        positions = Array(repeating: 0, count: sequenceCapacity)
        self.batchCapacity = batchCapacity
        let dimension = configuration.embeddingLength
        let kvDimension = configuration.headCountKV * configuration.widestHeadDimension
        let queryDimension = configuration.widestQueryDimension
        let hidden = configuration.widestFeedForward
        // Rows a product reads are at most this wide (a matrix's columns: what its input and
        // the products' working memory hold).
        let widest = max(dimension, hidden, queryDimension, model.architecture.matrices.map(\.columns).max() ?? 0)
        let backend = sharing?.backend.sharingThreads(widest: widest, batchCapacity: batchCapacity, contextLength: contextLength, activations: activations)
            ?? CPUCompute(threads: threads, widest: widest, batchCapacity: batchCapacity, contextLength: contextLength, activations: activations)
        self.backend = backend
        var buffers: [any DeviceBuffer] = []
        func buffer(_ count: Int) -> UnsafeMutablePointer<Float> {
            let made = backend.makeBuffer(bytes: count * 4, zeroed: true)
            buffers.append(made)
            return made.floats(count)
        }
        residual = buffer(batchCapacity * dimension)
        normed = buffer(batchCapacity * dimension)
        query = buffer(batchCapacity * queryDimension)
        key = buffer(batchCapacity * kvDimension)
        value = buffer(batchCapacity * kvDimension)
        attended = buffer(batchCapacity * queryDimension)
        gate = buffer(batchCapacity * hidden)
        up = buffer(batchCapacity * hidden)
        logits = buffer(batchCapacity * configuration.vocabularySize)
        var scratchFloats: [ScratchBuffer: Int] = [:]
        for need in model.architecture.scratch {
            scratchFloats[need.buffer] = max(scratchFloats[need.buffer] ?? 0, need.floats(rows: batchCapacity))
        }
        scratchBuffers = scratchFloats.mapValues { buffer($0) }
        let recurrence = configuration.recurrence
        var ordinal = 0
        recurrentIndex = (0..<configuration.blockCount).map { layer in
            guard configuration.isRecurrent(layer: layer) else { return nil }
            defer { ordinal += 1 }
            return ordinal
        }
        recurrentLayerFloats = recurrence?.stateFloats ?? 0
        recurrentFloatsPerSequence = ordinal * recurrentLayerFloats
        recurrentStates = buffer(sequenceCapacity * recurrentFloatsPerSequence)
        recurrentPositions = Array(repeating: 0, count: sequenceCapacity)
        let pairs = batchCapacity * configuration.widestRopeDimensionCount / 2
        ropeCosines = buffer(pairs)
        ropeSines = buffer(pairs)
        let slidingPairs = configuration.slidingRopeFrequencyBase == nil ? 0 : pairs
        slidingRopeCosines = buffer(slidingPairs)
        slidingRopeSines = buffer(slidingPairs)
        cacheGeometry = KVCacheGeometry(type: cacheType, heads: configuration.headCountKV, contextLength: contextLength,
                                        slotWidth: configuration.widestHeadDimension)
        layerStride = sequenceCapacity * contextLength * cacheType.bytes(values: kvDimension)
        // Layers that share another's keys and values take no place of their own.
        let owners = (0..<configuration.blockCount).filter { configuration.cacheLayer($0) == $0 }
        cachedLayers = owners.count
        cacheSlots = (0..<configuration.blockCount).map { owners.firstIndex(of: configuration.cacheLayer($0)) ?? 0 }
        // The cache's bytes, left unzeroed: only positions written are ever read, so the pages of
        // sequences and positions not reached stay untouched (memory grows with use).
        let cacheBytes = cachedLayers * layerStride
        let cache = (keys: backend.makeBuffer(bytes: cacheBytes, zeroed: false), values: backend.makeBuffer(bytes: cacheBytes, zeroed: false))
        keys = cache.keys.contents
        values = cache.values.contents
        adapterRoom = (backend.makeBuffer(bytes: 4, zeroed: false), backend.makeBuffer(bytes: 4, zeroed: false))
        self.buffers = buffers + [cache.keys, cache.values]
    }

    /// Makes every forward pass from now on apply `adapters`, growing the room for their products
    /// if they need more (so that no pass allocates).
    func useAdapters(_ adapters: AdapterSet) {
        self.adapters = adapters
        reserveRoom(for: adapters)
    }

    /// Makes the forward passes from now on apply `adapters` to the rows of `sequence` instead of
    /// the session's (nil: the session's again).
    func useAdapters(_ adapters: AdapterSet?, for sequence: Int) {
        sequenceAdapters[sequence] = adapters
        if let adapters { reserveRoom(for: adapters) }
    }

    /// The adapters the rows of `sequence` get.
    func adapters(of sequence: Int) -> AdapterSet {
        sequenceAdapters[sequence] ?? adapters
    }

    /// The rows of the pass running that adapters change, in runs under one set: the last
    /// `count` rows (all of them, or an unembedding's last), or, with `tokens`, the rows
    /// `tokens.indices` of the last `tokens.of` (an expert's, gathered), each run with its
    /// adapters. Rows of one sequence are one run; so are several sequences' under the same adapters.
    func adaptedRuns(count: Int, tokens: (indices: [Int], of: Int)? = nil) -> [(adapters: AdapterSet, rows: Range<Int>)] {
        guard !sequenceAdapters.isEmpty else { return adapters.isEmpty ? [] : [(adapters, 0..<count)] }
        let first = places.sequences.count - (tokens?.of ?? count)
        var runs: [(adapters: AdapterSet, rows: Range<Int>)] = []
        for row in 0..<count {
            let rowAdapters = adapters(of: places.sequences[first + (tokens?.indices[row] ?? row)])
            if let last = runs.last, last.adapters == rowAdapters {
                runs[runs.count - 1].rows = last.rows.lowerBound..<(row + 1)
            } else {
                runs.append((rowAdapters, row..<(row + 1)))
            }
        }
        return runs.filter { !$0.adapters.isEmpty }
    }

    /// Grows the room for adapters' products if `adapters` need more (so that no pass allocates).
    private func reserveRoom(for adapters: AdapterSet) {
        let needed = (lowRank: 4 * batchCapacity * adapters.largestRank, product: 4 * batchCapacity * adapters.widestRows)
        if needed.lowRank > adapterRoom.lowRank.byteCount { adapterRoom.lowRank = backend.makeBuffer(bytes: needed.lowRank, zeroed: false) }
        if needed.product > adapterRoom.product.byteCount { adapterRoom.product = backend.makeBuffer(bytes: needed.product, zeroed: false) }
    }

    /// Scratch buffer `name`, which a stage of the model declared (`ModelArchitecture.scratch`).
    func scratch(_ name: ScratchBuffer) -> UnsafeMutablePointer<Float> {
        guard let pointer = scratchBuffers[name] else { preconditionFailure("no stage of the model declared the scratch buffer \(name.name)") }
        return pointer
    }

    /// Places the next forward pass's `count` rows at the next positions of `sequence`.
    func placeRun(count: Int, sequence: Int) {
        places = RowPlaces(sequences: Array(repeating: sequence, count: count), positions: Array(positions[sequence]..<(positions[sequence] + count)),
                           oneRun: true)
    }

    /// Places one row of the next forward pass for each of `sequences` (each at most once), at
    /// its next position.
    func placeEach(_ sequences: [Int]) {
        places = RowPlaces(sequences: sequences, positions: sequences.map { positions[$0] }, oneRun: sequences.count == 1)
    }

    /// The cached keys and values of `layer` (or of the layer it shares them with).
    func cache(layer: Int) -> KVCacheLayer {
        KVCacheLayer(keys: keys + cacheSlots[layer] * layerStride, values: values + cacheSlots[layer] * layerStride, geometry: cacheGeometry)
    }

    /// Each sequence's recurrent state in `layer` (a recurrent layer).
    func recurrentStates(layer: Int) -> RecurrentStates {
        RecurrentStates(base: recurrentStates + (recurrentIndex[layer] ?? 0) * recurrentLayerFloats, sequenceStride: recurrentFloatsPerSequence)
    }

    /// The keys and values of the first `count` positions of `sequence`, in the order
    /// `cachedRuns` visits them, then its recurrent state (which must be at `count`; at 0 it is
    /// all zeros).
    func cacheContents(count: Int, sequence: Int = 0) -> [UInt8] {
        precondition(!isRecurrent || count == 0 || recurrentPositions[sequence] == count, "a recurrent state is only at its position")
        var contents = [UInt8](repeating: 0, count: count * bytesPerCachedToken + recurrentStateBytes)
        contents.withUnsafeMutableBytes { destination in
            cachedRuns(count: count, sequence: sequence) { run, offset, bytes in
                (destination.baseAddress! + offset).copyMemory(from: run, byteCount: bytes)
            }
            if count > 0 {
                (destination.baseAddress! + count * bytesPerCachedToken).copyMemory(from: recurrentState(of: sequence), byteCount: recurrentStateBytes)
            }
        }
        return contents
    }

    /// Writes back `contents`, from `cacheContents(count:)` of a session of the same model and
    /// cache type, as the first `count` positions of `sequence`, whose position becomes `count`.
    func restoreCache(_ contents: [UInt8], count: Int, sequence: Int = 0) {
        precondition(contents.count == count * bytesPerCachedToken + recurrentStateBytes && count <= contextLength, "a cache of another shape")
        contents.withUnsafeBytes { source in
            cachedRuns(count: count, sequence: sequence) { run, offset, bytes in
                run.copyMemory(from: source.baseAddress! + offset, byteCount: bytes)
            }
            UnsafeMutableRawPointer(recurrentState(of: sequence)).copyMemory(from: source.baseAddress! + count * bytesPerCachedToken, byteCount: recurrentStateBytes)
        }
        positions[sequence] = count
        recurrentPositions[sequence] = count
    }

    /// Copies the keys and values of the first `count` positions of sequence `source` into
    /// sequence `destination`, whose position becomes `count`, and the recurrent state (which
    /// must be at `count`).
    func copyCache(from source: Int, to destination: Int, count: Int) {
        precondition(recurrentFloatsPerSequence == 0 || recurrentPositions[source] == count, "a recurrent state is only at its position")
        let offset = cacheGeometry.offset(sequence: destination, kvHead: 0, position: 0) - cacheGeometry.offset(sequence: source, kvHead: 0, position: 0)
        cachedRuns(count: count, sequence: source) { run, _, bytes in
            (run + offset).copyMemory(from: run, byteCount: bytes)
        }
        recurrentState(of: destination).update(from: recurrentState(of: source), count: recurrentFloatsPerSequence)
        positions[destination] = count
        recurrentPositions[destination] = count
    }

    /// Whether the model keeps a recurrent state, which cannot go back to an earlier position.
    var isRecurrent: Bool { recurrentFloatsPerSequence > 0 }

    /// Whether a pass from `sequence`'s position may continue its recurrent state: it starts
    /// afresh at position 0, and otherwise only goes on from where it is.
    func continuesRecurrence(_ sequence: Int) -> Bool {
        !isRecurrent || positions[sequence] == 0 || positions[sequence] == recurrentPositions[sequence]
    }

    /// Bytes of one sequence's recurrent state.
    var recurrentStateBytes: Int { recurrentFloatsPerSequence * 4 }

    /// `sequence`'s recurrent state over every recurrent layer.
    private func recurrentState(of sequence: Int) -> UnsafeMutablePointer<Float> {
        recurrentStates + sequence * recurrentFloatsPerSequence
    }

    /// Calls `body` for each contiguous run of the first `count` positions of `sequence` — for
    /// each layer that keeps its own its keys then its values, each KV head in turn — with the run's start, its
    /// offset in that order, and its length in bytes.
    private func cachedRuns(count: Int, sequence: Int, _ body: (UnsafeMutableRawPointer, Int, Int) -> Void) {
        let bytes = count * cacheGeometry.slotBytes
        var offset = 0
        for slot in 0..<cachedLayers {
            for cache in [keys + slot * layerStride, values + slot * layerStride] {
                for head in 0..<cacheGeometry.heads {
                    body(cache + cacheGeometry.offset(sequence: sequence, kvHead: head, position: 0), offset, bytes)
                    offset += bytes
                }
            }
        }
    }

    /// Bytes of keys and values one cached token takes, over every layer.
    var bytesPerCachedToken: Int { cachedLayers * 2 * cacheGeometry.heads * cacheGeometry.slotBytes }

    /// Bytes allocated for the cache (all of it: pages not yet written take no memory) and buffers.
    var byteCount: Int {
        buffers.reduce(0) { $0 + $1.byteCount } + adapterRoom.lowRank.byteCount + adapterRoom.product.byteCount + backend.byteCount
    }
}
