import CPUBackend
import GGUF

/// The self-attention LLaMA made common, with the options its descendants add: biases on the
/// Q/K/V products (Qwen 2), Q/K/V in one matrix (Phi-3), RMSNorm of queries and keys before RoPE,
/// per head (Qwen 3, LFM2) or over all heads at once (OLMo 2), sliding-window layers and per-head
/// attention sinks (gpt-oss), and Gemma 4's: values normed without weights, values that are the
/// keys where the file has no value matrix, and layers that attend over an earlier layer's keys
/// and values. Every product is a `Projection`, with the scale and bias the file gives it
/// (llama.cpp's `build_qkv` and `build_attn`); each layer has the head width and key/value heads
/// of its `ModelConfiguration.layer`.
struct SelfAttention: Sublayer {
    let query: Projection
    /// The key and value products; nil in a layer that attends over another layer's cache
    /// (`ModelConfiguration.cacheLayer`), the value's nil where the values are the keys (before
    /// their norm).
    let key, value: Projection?
    /// The RMSNorm weights of the queries and the keys: one head's width, or all heads' (the
    /// norm then runs over all heads of a row at once).
    var queryNorm, keyNorm: [Float]?
    /// Ones, when values are RMS-normed without weights (Gemma 4).
    var valueNorm: [Float]?
    /// Whether RoPE rotates the queries and keys (not in SmolLM3's every fourth layer).
    var rotates = true
    /// Each query head's attention sink: a score in its softmax that attends to nothing.
    var sinks: [Float]?
    let output: Projection

    /// The attention of layer `index` under llama.cpp's names: separate Q/K/V matrices, or one
    /// (`attn_qkv`) viewed as its parts; `biases` requires the Q/K/V biases, `queryKeyNorms` the
    /// query and key norms (one head wide, or all heads', as the file has them), `sinks` the
    /// attention sinks; `valueNorm` norms the values, and `valuesMayBeKeys` lets the file leave
    /// out the value matrix. A layer that shares an earlier layer's cache reads no key or value
    /// matrix.
    static func load(layer index: Int, from weights: WeightLoader, biases: Bool = false, queryKeyNorms: Bool = false,
                     sinks: Bool = false, valueNorm: Bool = false, valuesMayBeKeys: Bool = false) throws(ModelError) -> SelfAttention {
        let c = weights.configuration.layer(index), q = c.queryDimension, kv = c.kvDimension
        let query: Projection, key: Projection?, value: Projection?
        let cachesKeys = c.cacheLayer(index) == index
        if weights.has(.queryKeyValue, layer: index) {
            // The rows in the order llama.cpp splits them.
            let all = try weights.projection(.queryKeyValue, layer: index, columns: c.embeddingLength, rows: q + 2 * kv, requireBias: biases)
            (query, key, value) = (all.rows(0..<q), all.rows(q..<(q + kv)), all.rows((q + kv)..<(q + 2 * kv)))
        } else {
            query = try weights.projection(.query, layer: index, columns: c.embeddingLength, rows: q, requireBias: biases)
            key = cachesKeys ? try weights.projection(.key, layer: index, columns: c.embeddingLength, rows: kv, requireBias: biases) : nil
            value = cachesKeys && !(valuesMayBeKeys && !weights.has(.value, layer: index))
                ? try weights.projection(.value, layer: index, columns: c.embeddingLength, rows: kv, requireBias: biases) : nil
        }
        var attention = SelfAttention(query: query, key: key, value: value,
                                      output: try weights.projection(.attentionOutput, layer: index, columns: q, rows: c.embeddingLength))
        if sinks { attention.sinks = try weights.vector(.attentionSinks, layer: index, length: c.headCount) }
        if queryKeyNorms {
            attention.queryNorm = try weights.vector(.queryNorm, layer: index, lengths: [c.headDimension, q])
            attention.keyNorm = cachesKeys ? try weights.vector(.keyNorm, layer: index, lengths: [c.headDimension, kv]) : nil
        }
        if valueNorm { attention.valueNorm = [Float](repeating: 1, count: c.headDimension) }
        return attention
    }

    /// The matrices one token reads.
    var matrices: [Matrix] { [query, key, value, output].compactMap { $0?.matrix } }

    /// Wo · attention(RoPE(Wq·x), RoPE(Wk·x), Wv·x) over `count` rows of `input` into `output`
    /// (which may be `input`), the keys and values into the cache of `layer`: over the sliding
    /// window, rotated with the sliding layers' RoPE tables when their base differs, in a layer
    /// that slides. The forward pass has prepared the state's RoPE tables.
    func apply(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int, layer: Int,
               configuration model: ModelConfiguration, state: InferenceState) {
        let c = model.layer(layer)
        query.apply(input, into: state.query, count: count, state: state)
        if let key {
            key.apply(input, into: state.key, count: count, state: state)
            if let value {
                value.apply(input, into: state.value, count: count, state: state)
            } else {
                state.backend.copyRows(state.key, stride: c.kvDimension, into: state.value, stride: c.kvDimension, width: c.kvDimension, count: count)
            }
            if let keyNorm {
                state.backend.rmsNorm(state.key, weights: keyNorm, epsilon: c.rmsEpsilon, into: state.key, count: count * c.kvDimension / keyNorm.count, width: keyNorm.count)
            }
            if let valueNorm {
                state.backend.rmsNorm(state.value, weights: valueNorm, epsilon: c.rmsEpsilon, into: state.value, count: count * c.headCountKV, width: c.headDimension)
            }
        }
        if let queryNorm {
            state.backend.rmsNorm(state.query, weights: queryNorm, epsilon: c.rmsEpsilon, into: state.query, count: count * c.queryDimension / queryNorm.count, width: queryNorm.count)
        }
        let slides = c.slides(layer: layer), ownBase = slides && c.slidingRopeFrequencyBase != nil
        state.rotateAndCache(layer: layer, count: count, configuration: c,
                                cosines: ownBase ? state.slidingRopeCosines : state.ropeCosines,
                                sines: ownBase ? state.slidingRopeSines : state.ropeSines, rotates: rotates,
                                cachesKeys: key != nil)
        state.attend(layer: layer, count: count, configuration: c, window: slides ? c.slidingWindow : nil, sinks: sinks)
        self.output.apply(state.attended, into: output, count: count, state: state)
    }
}
