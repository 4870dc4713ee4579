import GGUF

/// A place in every architecture's forward pass where a `ForwardHook` reads or changes the
/// activations: the same points in each block, whatever the architecture, named as
/// TransformerLens names its hook points. The raw value is the name users meet in cells, on the
/// command line and in file names; `layout` is the one table of each point's shape and
/// llama.cpp's node.
public enum ActivationPoint: String, Sendable, Hashable, CaseIterable {
    /// The token embeddings that enter block 0, after the embedding scale (Gemma's √width).
    case embedding = "embed"
    /// The residual stream entering a block: the embeddings, or the block before's output.
    case blockInput = "resid_pre"
    /// Each head's queries as attention uses them: after the query norm and RoPE
    /// (TransformerLens's `hook_rot_q`), before the attention scale.
    case queries = "q"
    /// Each key-value head's keys as they are cached: after the key norm and RoPE.
    case keys = "k"
    /// Each key-value head's values as they are cached.
    case values = "v"
    /// Each head's attention output before the output projection mixes them (llama.cpp's
    /// `kqv_out`): a row per token of heads × head dimension floats, head h's at h × head dimension.
    case headOutputs = "z"
    /// Each head's attention probabilities (llama.cpp's `kq_soft_max`): a row per token of
    /// heads × context length floats, head h's weight on position p at h × context length + p,
    /// zero outside the causal (or sliding) window. Recomputed only when a hook visits, and
    /// read-only: the forward pass does not use what a hook writes there.
    case attentionProbabilities = "pattern"
    /// What the block's token mixer adds to the residual stream: attention's output after its
    /// output projection (and Gemma's post-attention norm); a recurrent layer's output.
    case attentionOutput = "attn_out"
    /// The residual stream between the mixer and the feed-forward: the block's input plus
    /// `attn_out`.
    case blockMiddle = "resid_mid"
    /// The feed-forward's gate projection before its activation (a dense feed-forward's; a
    /// mixture of experts has one per expert and exposes none).
    case feedForwardPreActivation = "mlp_pre"
    /// The activation that enters the down projection: act(gate) ⊙ up (a dense feed-forward's).
    case feedForwardActivation = "mlp_post"
    /// What the feed-forward adds to the residual stream (after Gemma's post-feed-forward norm).
    case feedForwardOutput = "mlp_out"
    /// The residual stream after a block (llama.cpp's `l_out`): the next block's input, or, for
    /// the last block, what the final norm and output matrix turn into logits.
    case blockOutput = "resid_post"
    /// The final norm of the last block's output: what the output matrix reads.
    case finalNorm = "ln_final"
    /// The logits of every position (before sampling; after the final softcap where the model
    /// has one).
    case logits = "logits"

    /// The names earlier versions of Lumen gave some points, still accepted.
    public static let formerNames: [String: ActivationPoint] = ["resid": .blockOutput, "ffn_out": .feedForwardOutput, "heads": .headOutputs, "attn": .attentionProbabilities]

    /// The point called `name` (its TransformerLens name, or a name earlier versions used).
    public init?(name: String) {
        guard let point = Self(rawValue: name) ?? Self.formerNames[name] else { return nil }
        self = point
    }

    /// Where a point is, what one token's row holds, and which llama.cpp node computes it.
    public struct Layout: Sendable {
        /// Whether each block has the point (false for the embeddings, the final norm and the
        /// logits, which the model has once; hooks visit those with layer 0).
        public let perBlock: Bool
        /// The names of a row's axes ("width"; "head", "width"; "neuron"; "token").
        public let rowAxes: [String]
        /// The lengths of a row's axes in a layer of configuration `c` (`ModelConfiguration.layer`);
        /// for attention probabilities, the heads and the keys of a context of one position.
        let rowShape: @Sendable (_ c: ModelConfiguration) -> [Int]
        /// llama.cpp's graph node of the same values (`-L` for block L).
        public let node: String
        /// TransformerLens's hook of the same values, after `blocks.L.` for a point in each
        /// block (`hook_resid_post`, `attn.hook_z`); nil where TransformerLens has none.
        public let hook: String?
    }

    /// This point's row of the table.
    public var layout: Layout {
        switch self {
        case .embedding: Layout(perBlock: false, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "inp_embd (inp_scaled where scaled)", hook: "hook_embed")
        case .blockInput: Layout(perBlock: true, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "l_out of the block before (the embeddings for block 0)", hook: "hook_resid_pre")
        case .queries: Layout(perBlock: true, rowAxes: ["head", "width"], rowShape: { [$0.headCount, $0.headDimension] }, node: "Qcur-L after RoPE", hook: "attn.hook_rot_q")
        case .keys: Layout(perBlock: true, rowAxes: ["head", "width"], rowShape: { [$0.headCountKV, $0.headDimension] }, node: "Kcur-L after RoPE", hook: "attn.hook_rot_k")
        case .values: Layout(perBlock: true, rowAxes: ["head", "width"], rowShape: { [$0.headCountKV, $0.headDimension] }, node: "Vcur-L", hook: "attn.hook_v")
        case .headOutputs: Layout(perBlock: true, rowAxes: ["head", "width"], rowShape: { [$0.headCount, $0.headDimension] }, node: "kqv_out-L", hook: "attn.hook_z")
        case .attentionProbabilities: Layout(perBlock: true, rowAxes: ["head", "key"], rowShape: { [$0.headCount, 1] }, node: "kq_soft_max-L", hook: "attn.hook_pattern")
        case .attentionOutput: Layout(perBlock: true, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "attn_out-L (attn_post_norm-L in Gemma)", hook: "hook_attn_out")
        case .blockMiddle: Layout(perBlock: true, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "ffn_inp-L (sa_out-L in Gemma)", hook: "hook_resid_mid")
        case .feedForwardPreActivation: Layout(perBlock: true, rowAxes: ["neuron"], rowShape: { [$0.feedForwardLength] }, node: "ffn_gate-L", hook: "mlp.hook_pre")
        case .feedForwardActivation: Layout(perBlock: true, rowAxes: ["neuron"], rowShape: { [$0.feedForwardLength] }, node: "ffn_swiglu-L (ffn_geglu-L in Gemma)", hook: "mlp.hook_post")
        case .feedForwardOutput: Layout(perBlock: true, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "ffn_out-L (ffn_post_norm-L in Gemma)", hook: "hook_mlp_out")
        case .blockOutput: Layout(perBlock: true, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "l_out-L", hook: "hook_resid_post")
        case .finalNorm: Layout(perBlock: false, rowAxes: ["width"], rowShape: { [$0.embeddingLength] }, node: "result_norm", hook: "ln_final.hook_normalized")
        case .logits: Layout(perBlock: false, rowAxes: ["token"], rowShape: { [$0.vocabularySize] }, node: "result_output", hook: nil)
        }
    }

    /// TransformerLens's full hook name of this point in `block` (`blocks.12.hook_resid_post`,
    /// `hook_embed`), as SAELens' `hook_name` gives it; nil where TransformerLens has none.
    public func hookName(block: Int) -> String? {
        layout.hook.map { layout.perBlock ? "blocks.\(block).\($0)" : $0 }
    }

    /// The point and block (nil for a point the model has once) a TransformerLens hook name
    /// stands for (`blocks.12.hook_resid_post`; `attn.hook_q` and `attn.hook_k` are read as the
    /// rotated queries and keys, the only ones Lumen has); nil for a name of no point.
    public static func parse(hookName name: String) -> (point: ActivationPoint, block: Int?)? {
        let parts = name.split(separator: ".", maxSplits: 2).map(String.init)
        let unrotated = ["attn.hook_q": "attn.hook_rot_q", "attn.hook_k": "attn.hook_rot_k"]
        func point(_ hook: String, perBlock: Bool) -> ActivationPoint? {
            let hook = unrotated[hook] ?? hook
            return allCases.first { $0.layout.hook == hook && $0.layout.perBlock == perBlock }
        }
        if parts.count == 3, parts[0] == "blocks", let block = Int(parts[1]), block >= 0, let found = point(parts[2], perBlock: true) {
            return (found, block)
        }
        return point(name, perBlock: false).map { ($0, nil) }
    }

    /// Whether an intervention can change the point: every one but the attention probabilities,
    /// which the pass computes for the hooks that read them and does not read back.
    public var isEditable: Bool { self != .attentionProbabilities }

    /// The points an intervention can change, by name, for errors.
    public static var editable: String { allCases.filter(\.isEditable).map(\.rawValue).joined(separator: ", ") }

    /// The floats of one token's row at this point in layer `layer` of `c`, whose cache holds
    /// `contextLength` positions.
    public func width(in c: ModelConfiguration, layer: Int = 0, contextLength: Int) -> Int {
        let shape = layout.rowShape(c.layer(layer))
        return self == .attentionProbabilities ? shape[0] * contextLength : shape.reduce(1, *)
    }

    /// The points only attention layers have (a recurrent layer has none of them).
    public static let attentionPoints: Set<ActivationPoint> = [.queries, .keys, .values, .headOutputs, .attentionProbabilities]
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
    /// Refuses, before a run of `tokens` positions (a prompt's), a hook that does not fit it (a
    /// patch at positions the run does not have); `check(_:)` is asked too.
    func check(_ model: LanguageModel, tokens: Int) throws(ModelError)
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

    /// Why some of `blocks` never compute `point` beyond attention in a recurrent layer
    /// (`attentionMisfit`): keys and values in a layer that reads another layer's cache, a
    /// mixture of experts' feed-forward activations — or nil when they all do. A hook at a point
    /// a block never computes would silently do nothing.
    public func absenceMisfit(_ point: ActivationPoint, blocks: [Int]) -> String? {
        if point == .keys || point == .values, let sharing = blocks.first(where: { cacheLayer($0) != $0 }) {
            return "block \(sharing) reads block \(cacheLayer(sharing))'s keys and values and computes none: \(point.rawValue) exists in the blocks that cache their own"
        }
        if point == .feedForwardPreActivation || point == .feedForwardActivation, let expert = blocks.first(where: { experts != nil && $0 >= leadingDenseLayers }) {
            return "block \(expert)'s feed-forward is a mixture of experts, whose activations are per expert: mlp_pre and mlp_post exist in dense blocks only (mlp_out is the experts' sum)"
        }
        return nil
    }

    /// Why `point`'s rows of `blocks` cannot be kept together — some are of another width than
    /// the widest ones (Gemma 4's sliding layers' heads) —, or nil when they can.
    public func widthMisfit(_ point: ActivationPoint, blocks: [Int]) -> String? {
        let widths = blocks.map { point.width(in: self, layer: $0, contextLength: 0) }
        guard let widest = widths.max(), widths.contains(where: { $0 != widest }) else { return nil }
        let other = blocks.indices.filter { widths[$0] != widest }.map { blocks[$0] }, kept = blocks.indices.filter { widths[$0] == widest }.map { blocks[$0] }
        return "block\(other.count == 1 ? "" : "s") \(other.map(String.init).joined(separator: ", ")) \(other.count == 1 ? "has" : "have") \(point.rawValue) rows of \(widths[blocks.firstIndex(of: other[0])!]) floats, the others \(widest); the blocks with rows of \(widest) are \(kept.map(String.init).joined(separator: ", "))"
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
    /// Fits a run of any length.
    public func check(_ model: LanguageModel, tokens: Int) throws(ModelError) {}
}

extension InferenceState {
    /// The hooks that look into the rows of `sequence`: a generation's alone, or that sequence's
    /// generation's in the batch.
    func hooks(of sequence: Int) -> [any ForwardHook] {
        sequenceHooks.isEmpty ? hooks : hooks + (sequenceHooks[sequence] ?? [])
    }

    /// Whether a hook of a sequence the pass running has rows of visits `point` of block `layer`.
    func hooksVisit(_ point: ActivationPoint, layer: Int) -> Bool {
        hooks.contains { $0.visits(point, layer: layer) }
            || Set(places.sequences).contains { sequence in sequenceHooks[sequence]?.contains { $0.visits(point, layer: layer) } == true }
    }

    /// Hands `count` rows of `width` floats at `rows`, the activations at `point` of block
    /// `layer` for the pass's tokens, to the hooks that visit there: each run of rows at
    /// consecutive positions of one sequence (a prompt's batch, or one decoding sequence's row)
    /// to that sequence's hooks, with its positions.
    func visit(_ point: ActivationPoint, layer: Int, rows: UnsafeMutablePointer<Float>, count: Int, width: Int) {
        guard !hooks.isEmpty || !sequenceHooks.isEmpty else { return }
        guard places.sequences.count >= count, places.positions.count >= count else {
            for hook in hooks where hook.visits(point, layer: layer) {
                hook.visit(point, layer: layer, positions: position..<(position + count),
                           rows: UnsafeMutableBufferPointer(start: rows, count: count * width), width: width)
            }
            return
        }
        var first = 0
        while first < count {
            let sequence = places.sequences[first]
            var end = first + 1
            while end < count, places.sequences[end] == sequence, places.positions[end] == places.positions[end - 1] + 1 { end += 1 }
            let start = places.positions[first]
            for hook in hooks(of: sequence) where hook.visits(point, layer: layer) {
                hook.visit(point, layer: layer, positions: start..<(start + end - first),
                           rows: UnsafeMutableBufferPointer(start: rows + first * width, count: (end - first) * width), width: width)
            }
            first = end
        }
    }
}
