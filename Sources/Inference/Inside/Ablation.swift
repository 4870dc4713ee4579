import GGUF

/// Zeroes activations in the forward pass, at every position: a block's attention or
/// feed-forward output (the block then adds nothing through it), or some heads' outputs before
/// the output projection mixes them (`ActivationPoint.headOutputs`).
public struct Ablation: SiteHook, Equatable {
    /// Where: `.attentionOutput`, `.feedForwardOutput` or `.headOutputs`.
    public let point: ActivationPoint
    /// The block.
    public let block: Int
    /// At `.headOutputs`, the heads zeroed.
    public let heads: [Int]
    /// At `.headOutputs`, the floats of one head's output (the model's head dimension).
    public let headDimension: Int

    /// Zeroes `point` (`.attentionOutput` or `.feedForwardOutput`) of `block`.
    public init(_ point: ActivationPoint, block: Int) {
        self.point = point
        self.block = block
        heads = []
        headDimension = 0
    }

    /// Zeroes the outputs of `heads` in `block` of a model whose heads have `headDimension`
    /// floats.
    public init(heads: [Int], block: Int, headDimension: Int) {
        point = .headOutputs
        self.block = block
        self.heads = heads
        self.headDimension = headDimension
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "ablation", reason: reason) }
        if let misfit = c.blockMisfit(block) { throw refuse(misfit) }
        switch point {
        case .headOutputs:
            guard !heads.isEmpty else { throw refuse("no heads to ablate") }
            if let misfit = c.attentionMisfit([block]) { throw refuse(misfit) }
            if let head = heads.first(where: { !(0..<c.headCount).contains($0) }) {
                throw refuse("head \(head) is not one of the model's \(c.headCount) heads (0…\(c.headCount - 1))")
            }
            guard headDimension == c.layer(block).headDimension else {
                throw refuse("the ablation was made for heads of \(headDimension) floats, but block \(block)'s have \(c.layer(block).headDimension)")
            }
        case .attentionOutput, .feedForwardOutput: break
        case .blockOutput, .attentionProbabilities:
            throw refuse("\(point.rawValue) cannot be ablated: choose attn_out, ffn_out or heads")
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        guard point == .headOutputs else {
            rows.update(repeating: 0)
            return
        }
        for row in 0..<positions.count {
            for head in heads {
                let start = row * width + head * headDimension
                rows[start..<(start + headDimension)].update(repeating: 0)
            }
        }
    }
}
