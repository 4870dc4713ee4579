import GGUF

/// Zeroes activations in the forward pass, at every position: any point of a block the pass
/// reads on (its attention or feed-forward output, so the block adds nothing through it), or
/// some heads' rows of a point that has heads (`q`, `k`, `v`, `z`).
public struct Ablation: SiteHook, Equatable {
    /// Where: a point of each block but the attention probabilities.
    public let point: ActivationPoint
    /// The block.
    public let block: Int
    /// At `.headOutputs`, the heads zeroed.
    public let heads: [Int]
    /// At `.headOutputs`, the floats of one head's output (the model's head dimension).
    public let headDimension: Int

    /// Zeroes `point` of `block`.
    public init(_ point: ActivationPoint, block: Int) {
        self.point = point
        self.block = block
        heads = []
        headDimension = 0
    }

    /// Zeroes the rows of `heads` at `point` (`.headOutputs` unless given: one with heads) in
    /// `block` of a model whose heads have `headDimension` floats.
    public init(heads: [Int], block: Int, headDimension: Int, point: ActivationPoint = .headOutputs) {
        self.point = point
        self.block = block
        self.heads = heads
        self.headDimension = headDimension
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "ablation", reason: reason) }
        if let misfit = c.blockMisfit(block) { throw refuse(misfit) }
        guard point.layout.perBlock, point != .attentionProbabilities else {
            throw refuse("\(point.rawValue) cannot be ablated in a block: choose a point each block has and the pass reads on (\(ActivationPoint.allCases.filter { $0.layout.perBlock && $0 != .attentionProbabilities }.map(\.rawValue).joined(separator: ", ")))")
        }
        if ActivationPoint.attentionPoints.contains(point), let misfit = c.attentionMisfit([block]) { throw refuse(misfit) }
        if let misfit = c.absenceMisfit(point, blocks: [block]) { throw refuse(misfit) }
        guard point.layout.rowAxes.first == "head" || heads.isEmpty else { throw refuse("\(point.rawValue) has no heads: ablate heads of q, k, v or z") }
        if point.layout.rowAxes.first == "head" && !heads.isEmpty {
            let count = point.layout.rowShape(c.layer(block))[0]
            if let head = heads.first(where: { !(0..<count).contains($0) }) {
                throw refuse("head \(head) is not one of block \(block)'s \(count) \(point == .keys || point == .values ? "key-value " : "")heads (0…\(count - 1))")
            }
            guard headDimension == c.layer(block).headDimension else {
                throw refuse("the ablation was made for heads of \(headDimension) floats, but block \(block)'s have \(c.layer(block).headDimension)")
            }
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        guard !heads.isEmpty else {
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
