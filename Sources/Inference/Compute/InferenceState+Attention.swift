import CPUBackend
import Foundation

/// Attention's steps over a session's state, each the backend's operation with the hooks that
/// look between them: RoPE's tables, rotating the new rows' queries and keys and writing the
/// keys and values into the cache, and attention over it.
extension InferenceState {
    /// Fills the RoPE tables for the rows placed: the global layers', and the sliding layers'
    /// when their base differs (`ModelConfiguration.slidingRopeFrequencyBase`) over their own
    /// rotated dimensions; `factors` divide the global layers' frequencies, and the sliding
    /// layers' too unless `slidingFactors` is false (Gemma 4's full layers alone take them).
    func prepareRoPE(configuration c: ModelConfiguration, factors: [Float]? = nil, slidingFactors: Bool = true) {
        Self.prepareRoPE(positions: places.positions, configuration: c, base: c.ropeFrequencyBase, factors: factors,
                         cosines: ropeCosines, sines: ropeSines)
        if let slidingBase = c.slidingRopeFrequencyBase {
            var sliding = c
            sliding.ropeDimensionCount = c.slidingLayerShape?.ropeDimensionCount ?? c.ropeDimensionCount
            Self.prepareRoPE(positions: places.positions, configuration: sliding, base: slidingBase, factors: slidingFactors ? factors : nil,
                             cosines: slidingRopeCosines, sines: slidingRopeSines)
        }
    }

    /// Fills RoPE tables (`[token][pair]` cosines and sines) for tokens at `positions`, with
    /// frequency base `base`, stretched as the configuration's `ropeScaling` says. `factors`
    /// (Llama 3's `rope_freqs`) divide each pair's frequency.
    private static func prepareRoPE(positions: [Int], configuration: ModelConfiguration, base: Float, factors: [Float]?,
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

    /// Rotates the new rows' queries and keys (`query`, `key`) with the RoPE tables (unless the
    /// layer does not `rotate`), shows hooks the queries, keys and values, and writes the keys
    /// and values into the cache of `layer` at each row's sequence and position — the queries
    /// alone in a layer that does not `cachesKeys` (it attends over another layer's).
    /// `configuration` is the layer's (`ModelConfiguration.layer`).
    func rotateAndCache(layer: Int, count: Int, configuration c: ModelConfiguration, cosines: UnsafeMutablePointer<Float>,
                        sines: UnsafeMutablePointer<Float>, rotates: Bool = true, cachesKeys: Bool = true) {
        if rotates {
            let rotation = RoPERotation(headWidth: c.headDimension, pairs: c.ropeDimensionCount / 2, adjacent: c.ropeStyle == .adjacent)
            backend.rotate(query, count: count, width: c.queryDimension, heads: c.headCount, rotation: rotation, cosines: cosines, sines: sines)
            if cachesKeys {
                backend.rotate(key, count: count, width: c.kvDimension, heads: c.headCountKV, rotation: rotation, cosines: cosines, sines: sines)
            }
        }
        visit(.queries, layer: layer, rows: query, count: count, width: c.queryDimension)
        guard cachesKeys else { return }
        visit(.keys, layer: layer, rows: key, count: count, width: c.kvDimension)
        visit(.values, layer: layer, rows: value, count: count, width: c.kvDimension)
        backend.store(keys: key, values: value, count: count, places: places, heads: c.headCountKV, headWidth: c.headDimension,
                      in: cache(layer: layer))
    }

    /// Causal grouped-query attention of each new row's query heads over its sequence's cache in
    /// `layer`, or over its last `window` positions, into `attended`; `sinks` (gpt-oss's) give
    /// each query head one more score in its softmax, which attends to nothing. Hooks see the
    /// heads' outputs and, when they ask, the attention probabilities. `configuration` is the
    /// layer's (`ModelConfiguration.layer`).
    func attend(layer: Int, count: Int, configuration c: ModelConfiguration, window: Int? = nil, sinks: [Float]? = nil) {
        let shape = AttentionShape(heads: c.headCount, kvHeads: c.headCountKV, headWidth: c.headDimension, scale: c.attentionScale,
                                   window: window, sinks: sinks)
        let cache = cache(layer: layer)
        backend.attend(query, count: count, places: places, shape: shape, cache: cache, into: attended)
        visit(.headOutputs, layer: layer, rows: attended, count: count, width: c.queryDimension)
        guard hooksVisit(.attentionProbabilities, layer: layer) else { return }
        var probabilities = backend.attentionProbabilities(query, count: count, places: places, shape: shape, cache: cache)
        probabilities.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress {
                visit(.attentionProbabilities, layer: layer, rows: base, count: count, width: c.headCount * contextLength)
            }
        }
    }
}
