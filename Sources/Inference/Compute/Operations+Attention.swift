import CPUBackend
import Foundation

/// The building blocks that read a model's configuration and a session's state: RoPE's tables
/// and rotations, writing the KV cache, and attention over it (the primitives they stand on are
/// the CPU backend's `Operations`).
extension Operations {
    /// Fills the state's RoPE tables for the rows it placed: the global layers', and the sliding
    /// layers' when their base differs (`ModelConfiguration.slidingRopeFrequencyBase`) over their
    /// own rotated dimensions; `factors` divide the global layers' frequencies, and the sliding
    /// layers' too unless `slidingFactors` is false (Gemma 4's full layers alone take them).
    static func prepareRoPE(state: InferenceState, configuration c: ModelConfiguration, factors: [Float]? = nil, slidingFactors: Bool = true) {
        prepareRoPE(positions: state.rowPositions, configuration: c, base: c.ropeFrequencyBase, factors: factors,
                    cosines: state.ropeCosines, sines: state.ropeSines)
        if let slidingBase = c.slidingRopeFrequencyBase {
            var sliding = c
            if let dimensions = c.slidingRopeDimensionCount { sliding.ropeDimensionCount = dimensions }
            prepareRoPE(positions: state.rowPositions, configuration: sliding, base: slidingBase, factors: slidingFactors ? factors : nil,
                        cosines: state.slidingRopeCosines, sines: state.slidingRopeSines)
        }
    }

    /// Fills RoPE tables (`[token][pair]` cosines and sines) for tokens at `positions`, with
    /// frequency base `base`, stretched as the configuration's `ropeScaling` says. `factors`
    /// (Llama 3's `rope_freqs`) divide each pair's frequency.
    static func prepareRoPE(positions: [Int], configuration: ModelConfiguration, base: Float, factors: [Float]? = nil,
                            cosines: UnsafeMutablePointer<Float>, sines: UnsafeMutablePointer<Float>) {
        let dimensions = configuration.ropeDimensionCount, pairs = dimensions / 2, scaling = configuration.ropeScaling
        // The scaling's ramp depends on the base alone: once a pass, not once a token.
        let mixes = scaling == .unscaled ? nil : scaling.extrapolationMixes(dimensions: dimensions, base: base)
        for (token, position) in positions.enumerated() {
            for pair in 0..<pairs {
                let factor = Double(factors?[pair] ?? 1)
                let angle = Double(position) * pow(Double(base), -2 * Double(pair) / Double(dimensions)) / factor
                let (cosine, sine) = mixes.map { scaling.rotation(angle: angle, mix: $0[pair]) } ?? (Float(cos(angle)), Float(sin(angle)))
                cosines[token * pairs + pair] = cosine
                sines[token * pairs + pair] = sine
            }
        }
    }

    /// Rotates the dimension pairs of each head by the token's angles: adjacent pairs
    /// `(v[2i], v[2i+1])` or the halves `(v[i], v[i + d/2])`, as the configuration says.
    static func rope(_ vector: UnsafeMutablePointer<Float>, heads: Int, cosines: UnsafeMutablePointer<Float>,
                     sines: UnsafeMutablePointer<Float>, configuration: ModelConfiguration) {
        let headDimension = configuration.headDimension
        let pairs = configuration.ropeDimensionCount / 2
        for head in 0..<heads {
            let pointer = vector + head * headDimension
            for pair in 0..<pairs {
                let (i, j) = configuration.ropeStyle == .adjacent ? (2 * pair, 2 * pair + 1) : (pair, pair + pairs)
                let first = pointer[i], second = pointer[j]
                let cosine = cosines[pair], sine = sines[pair]
                pointer[i] = first * cosine - second * sine
                pointer[j] = first * sine + second * cosine
            }
        }
    }

    /// Rotates each new token's queries and keys (`state.query`, `state.key`) with the RoPE tables
    /// (unless the layer does not `rotate`), shows hooks the queries, keys and values, and writes
    /// its keys and values into the cache of
    /// `layer`, at its row's sequence and position — the queries alone in a layer that does not
    /// `cachesKeys` (it attends over another layer's). `configuration` is the layer's
    /// (`ModelConfiguration.layer`).
    static func ropeAndCache(state: InferenceState, layer: Int, count: Int, configuration: ModelConfiguration,
                             cosines: UnsafeMutablePointer<Float>, sines: UnsafeMutablePointer<Float>, rotates: Bool = true,
                             cachesKeys: Bool = true) {
        let pairs = configuration.ropeDimensionCount / 2
        let kvDimension = configuration.kvDimension, headDimension = configuration.headDimension
        if rotates {
            for index in 0..<count {
                let tokenCosines = cosines + index * pairs, tokenSines = sines + index * pairs
                rope(state.query + index * configuration.queryDimension, heads: configuration.headCount, cosines: tokenCosines, sines: tokenSines, configuration: configuration)
                if cachesKeys {
                    rope(state.key + index * kvDimension, heads: configuration.headCountKV, cosines: tokenCosines, sines: tokenSines, configuration: configuration)
                }
            }
        }
        state.visit(.queries, layer: layer, rows: state.query, count: count, width: configuration.queryDimension)
        guard cachesKeys else { return }
        state.visit(.keys, layer: layer, rows: state.key, count: count, width: kvDimension)
        state.visit(.values, layer: layer, rows: state.value, count: count, width: kvDimension)
        for index in 0..<count {
            let sequence = state.rowSequences[index], position = state.rowPositions[index]
            for head in 0..<configuration.headCountKV {
                let offset = state.cacheOffset(sequence: sequence, kvHead: head, position: position)
                let source = index * kvDimension + head * headDimension
                state.cacheKernels.store(state.key + source, state.keyCache(layer: layer) + offset, headDimension)
                state.cacheKernels.store(state.value + source, state.valueCache(layer: layer) + offset, headDimension)
            }
        }
    }

    /// Causal grouped-query attention of each new token's query heads over its sequence's cache,
    /// or over its last `window` positions. A prompt's tokens go four at a time (`attendFour`:
    /// each cached key and value read once for the four), unless a window cuts off positions
    /// within them or the batch is computed token by token (`MatrixMultiplier.Scratch.tokenByToken`,
    /// and always when its rows are of several sequences). `sinks` (gpt-oss's) give each query
    /// head one more score in its softmax, which attends to nothing. `configuration` is the
    /// layer's (`ModelConfiguration.layer`).
    static func attention(state: InferenceState, layer: Int, count: Int, configuration: ModelConfiguration, window: Int? = nil,
                          sinks: [Float]? = nil) {
        let headDimension = configuration.headDimension, stride = state.cachedHeadDimension
        let heads = configuration.headCount
        let queryDimension = configuration.queryDimension
        let group = heads / configuration.headCountKV
        let scale = configuration.attentionScale
        let keys = state.keyCache(layer: layer), values = state.valueCache(layer: layer), attend = state.cacheKernels
        // The rows' places, read once here rather than from the state by every thread.
        let rowSequences = state.rowSequences, rowPositions = state.rowPositions
        let work = count * heads * ((rowPositions.max() ?? 0) + 1) * headDimension
        let fourAtOnce = state.rowsAreOneRun && !state.scratch.tokenByToken
        // Items are (group of four tokens, head); each thread takes its own share's items in
        // order, and the later groups, which attend to more positions, are shared out at the end.
        let together = AttentionKernels.queriesAtOnce
        let groups = (count + together - 1) / together
        state.pool.parallelChunks(groups * heads, chunk: max(1, heads / 2), work: work * 8) { part, range in
            let scores = state.scores + part * state.scoresPerThread
            for item in range {
                let firstToken = item / heads * together, head = item % heads
                let tokens = min(together, count - firstToken)
                let query = state.query + firstToken * queryDimension + head * headDimension
                let output = state.attended + firstToken * queryDimension + head * headDimension
                let length = rowPositions[firstToken] + 1
                let sink = sinks?[head] ?? -.infinity
                // A sliding window keeps the positions p with (token position − p) < window.
                if tokens == together && headDimension % 8 == 0 && window.map({ length + together - 1 <= $0 }) ?? true && fourAtOnce {
                    let kvOffset = state.cacheOffset(sequence: rowSequences[firstToken], kvHead: head / group, position: 0)
                    attend.attendFour(keys + kvOffset, values + kvOffset, stride, query, queryDimension, headDimension,
                                      length, scale, sink, scores, state.contextLength, output, queryDimension)
                    continue
                }
                for token in 0..<tokens {
                    let kvOffset = state.cacheOffset(sequence: rowSequences[firstToken + token], kvHead: head / group, position: 0)
                    let length = rowPositions[firstToken + token] + 1
                    let first = window.map { max(0, length - $0) } ?? 0
                    _ = attend.attend(keys + kvOffset, values + kvOffset, stride, query + token * queryDimension, headDimension,
                                      first, length, scale, sink, scores, output + token * queryDimension)
                }
            }
        }
        state.visit(.headOutputs, layer: layer, rows: state.attended, count: count, width: queryDimension)
        state.visitAttentionProbabilities(layer: layer, count: count, configuration: configuration, window: window, sinks: sinks)
    }
}
