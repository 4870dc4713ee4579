import GGUF

/// A place in every architecture's forward pass where a `ForwardHook` reads or changes the
/// activations: the same points in each block, whatever the architecture. The raw value is the
/// name users meet in cells and file names.
public enum ActivationPoint: String, Sendable, Hashable, CaseIterable {
    /// The residual stream after a block, its input plus both outputs (llama.cpp's `l_out`): the
    /// next block's input, or, for the last block, what the final norm and output matrix turn
    /// into logits.
    case blockOutput = "resid"
    /// A block's attention output after its output projection (and Gemma's post-attention
    /// norm), before it joins the residual stream.
    case attentionOutput = "attn_out"
    /// A block's feed-forward output (after Gemma's post-feed-forward norm), before it joins the
    /// residual stream.
    case feedForwardOutput = "ffn_out"
    /// Each head's attention output before the output projection mixes them (llama.cpp's
    /// `kqv_out`, TransformerLens's `z`): a row per token of heads × head dimension floats,
    /// head h's values at h × head dimension.
    case headOutputs = "heads"
    /// Each head's attention probabilities (llama.cpp's `kq_soft_max`): a row per token of
    /// heads × context length floats, head h's weight on position p at h × context length + p,
    /// zero outside the causal (or sliding) window. Recomputed only when a hook visits, and
    /// read-only: the forward pass does not use what a hook writes there.
    case attentionProbabilities = "attn"

    /// The point called `name` in cells ("resid", "attn_out", "ffn_out", "heads", "attn").
    public init?(name: String) { self.init(rawValue: name) }

    /// The floats of one token's row at this point in `model`, whose cache holds
    /// `contextLength` positions.
    public func width(in c: ModelConfiguration, contextLength: Int) -> Int {
        switch self {
        case .blockOutput, .attentionOutput, .feedForwardOutput: c.embeddingLength
        case .headOutputs: c.queryDimension
        case .attentionProbabilities: c.headCount * contextLength
        }
    }
}

/// Looks into forward passes, or changes them: captures activations, adds a steering vector,
/// patches in another run's activations, ablates a block's output. A hook runs on the session's
/// thread, inside the forward pass, so it must not block; one that keeps what it sees stores it
/// behind a lock (it is `Sendable`).
public protocol ForwardHook: Sendable {
    /// Whether the hook visits `point` of block `layer`; the forward pass does nothing at the
    /// others, so a pass with no hook there costs what one without hooks does.
    func visits(_ point: ActivationPoint, layer: Int) -> Bool
    /// Reads or changes the activations at `point` of block `layer` for a batch of tokens:
    /// `rows` holds one row of `width` floats per token, for the positions `positions`, in order.
    func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int)
    /// Refuses, before any pass runs, a hook that does not fit `model` (a vector of another
    /// width, blocks the model does not have), so a run is never silently left unchanged.
    func check(_ model: LanguageModel) throws(ModelError)
}

extension ModelConfiguration {
    /// Why `block` is not one of this model's blocks ("block 30 is not one of the model's 30
    /// blocks (0…29)"), or nil when it is.
    public func blockMisfit(_ block: Int) -> String? {
        (0..<blockCount).contains(block) ? nil : "block \(block) is not one of the model's \(blockCount) blocks (0…\(blockCount - 1))"
    }

    /// Why `blocks` have no attention heads to look at — recurrent layers of a hybrid model —, or
    /// nil when they all do.
    public func attentionMisfit(_ blocks: [Int]) -> String? {
        let recurrent = blocks.filter { isRecurrent(layer: $0) }
        guard !recurrent.isEmpty else { return nil }
        let attention = (0..<blockCount).filter { !isRecurrent(layer: $0) }.map(String.init).joined(separator: ", ")
        return "block\(recurrent.count == 1 ? "" : "s") \(recurrent.map(String.init).joined(separator: ", ")) \(recurrent.count == 1 ? "is a" : "are") recurrent\(recurrence.map { " (\($0.kind))" } ?? "") layer\(recurrent.count == 1 ? "" : "s") without attention heads; the attention layers are \(attention)"
    }

    /// Why the heads' outputs of `blocks` cannot be kept together — some are narrower than the
    /// full layers' (Gemma 4's sliding layers) —, or nil when they can.
    public func headWidthMisfit(_ blocks: [Int]) -> String? {
        let narrower = blocks.filter { layer($0).headDimension != headDimension }
        guard let first = narrower.first else { return nil }
        let full = (0..<blockCount).filter { layer($0).headDimension == headDimension }.map(String.init).joined(separator: ", ")
        return "block\(narrower.count == 1 ? "" : "s") \(narrower.map(String.init).joined(separator: ", ")) \(narrower.count == 1 ? "has" : "have") heads of \(layer(first).headDimension) floats, the others \(headDimension); the blocks with heads of \(headDimension) are \(full)"
    }
}

/// A hook at one point of one block (an ablation, a patch): it visits there only.
public protocol SiteHook: ForwardHook {
    /// The point.
    var point: ActivationPoint { get }
    /// The block.
    var block: Int { get }
}

extension SiteHook {
    public func visits(_ point: ActivationPoint, layer: Int) -> Bool {
        point == self.point && layer == block
    }
}

extension ForwardHook {
    /// Fits every model.
    public func check(_ model: LanguageModel) throws(ModelError) {}
}

extension InferenceState {
    /// Hands `count` rows of `width` floats at `rows`, the activations at `point` of block
    /// `layer` for the tokens at the pass's positions (consecutive: hooks look into passes over
    /// one sequence), to the hooks that visit there.
    func visit(_ point: ActivationPoint, layer: Int, rows: UnsafeMutablePointer<Float>, count: Int, width: Int) {
        guard !hooks.isEmpty else { return }
        let start = rowPositions.first ?? position
        for hook in hooks where hook.visits(point, layer: layer) {
            hook.visit(point, layer: layer, positions: start..<(start + count),
                       rows: UnsafeMutableBufferPointer(start: rows, count: count * width), width: width)
        }
    }

    /// Hands each head's attention probabilities at block `layer` for the batch's `count` tokens
    /// (`ActivationPoint.attentionProbabilities`) to the hooks that visit them, recomputing them
    /// with the cache's own attention kernel after the batch's keys are cached. `c` is the layer's
    /// configuration (`ModelConfiguration.layer`).
    func visitAttentionProbabilities(layer: Int, count: Int, configuration c: ModelConfiguration, window: Int?, sinks: [Float]?) {
        guard hooks.contains(where: { $0.visits(.attentionProbabilities, layer: layer) }) else { return }
        let width = c.headCount * contextLength, group = c.headCount / c.headCountKV
        var rows = [Float](repeating: 0, count: count * width)
        var scores = [Float](repeating: 0, count: contextLength), output = [Float](repeating: 0, count: c.headDimension)
        for token in 0..<count {
            let length = rowPositions[token] + 1
            let first = window.map { max(0, length - $0) } ?? 0
            for head in 0..<c.headCount {
                let kvOffset = cacheOffset(sequence: rowSequences[token], kvHead: head / group, position: 0)
                // The kernel leaves each position's exp(score − max) in `scores` and returns 1 / their
                // total (a sink's share included: with one, a row sums to less than 1, as llama.cpp's).
                let inverse = cacheKernels.attend(keyCache(layer: layer) + kvOffset, valueCache(layer: layer) + kvOffset, cachedHeadDimension,
                                                  query + token * c.queryDimension + head * c.headDimension, c.headDimension, first, length,
                                                  c.attentionScale, sinks?[head] ?? -.infinity, &scores, &output)
                for key in first..<length { rows[token * width + head * contextLength + key] = scores[key] * inverse }
            }
        }
        rows.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { visit(.attentionProbabilities, layer: layer, rows: base, count: count, width: width) }
        }
    }
}
