import GGUF

/// Changes activations in the forward pass, `x ← x · scale + add`, for the elements chosen at
/// one point of one block (or `embed`, `ln_final`, `logits`, outside the blocks): at every position or some, in every head or some (at a point with
/// heads: `q`, `k`, `v`, `z`), every element of the row — of each chosen head's slice — or some
/// (`neurons`). The one mechanism behind `ablate` (scale 0: the block adds nothing through what
/// is zeroed) and `intervene` (scale, add, or both).
public struct ActivationEdit: SiteHook, Equatable {
    /// Where: any point but the attention probabilities (which the pass does not read back).
    public let point: ActivationPoint
    /// The block (0 for a point outside the blocks).
    public let block: Int
    /// The positions changed (nil: every position, a generation's included).
    public let positions: [Int]?
    /// At a point with heads, the heads changed (empty: the whole row, as one slice).
    public let heads: [Int]
    /// The floats of one head's slice (the model's head dimension), when `heads` are chosen.
    public let headDimension: Int
    /// The elements changed within the row, or within each chosen head's slice (empty: all).
    public let neurons: [Int]
    /// What each chosen element is multiplied by.
    public let scale: Float
    /// What is added after: nothing (empty), one number to every chosen element, or one number
    /// per element of `neurons` (per element of the slice when `neurons` is empty).
    public let addition: [Float]

    /// `x ← x · scale + addition` for the chosen elements of `point` in `block` (a model whose
    /// heads have `headDimension` floats, when `heads` are chosen).
    public init(_ point: ActivationPoint, block: Int, positions: [Int]? = nil, heads: [Int] = [], headDimension: Int = 0, neurons: [Int] = [],
                scale: Float, addition: [Float] = []) {
        self.point = point
        self.block = block
        self.positions = positions
        self.heads = heads
        self.headDimension = headDimension
        self.neurons = neurons
        self.scale = scale
        self.addition = addition
    }

    /// An ablation: the chosen elements zeroed.
    public static func zeroing(_ point: ActivationPoint, block: Int, positions: [Int]? = nil, heads: [Int] = [], headDimension: Int = 0,
                               neurons: [Int] = []) -> ActivationEdit {
        ActivationEdit(point, block: block, positions: positions, heads: heads, headDimension: headDimension, neurons: neurons, scale: 0)
    }

    /// The floats of one slice in a row of `rowWidth`.
    private func sliceLength(rowWidth: Int) -> Int { heads.isEmpty ? rowWidth : headDimension }

    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: scale == 0 && addition.isEmpty ? "ablation" : "intervention", reason: reason) }
        guard point.isEditable else {
            throw refuse("\(point.rawValue) cannot be changed: the pass does not read it back; choose one of \(ActivationPoint.editable)")
        }
        if point.layout.perBlock, let misfit = c.blockMisfit(block) { throw refuse(misfit) }
        guard point.layout.perBlock || block == 0 else { throw refuse("\(point.rawValue) is not in a block: give block 0 (none)") }
        if ActivationPoint.attentionPoints.contains(point), let misfit = c.attentionMisfit([block]) { throw refuse(misfit) }
        if let misfit = c.absenceMisfit(point, blocks: [block]) { throw refuse(misfit) }
        guard point.layout.rowAxes.first == "head" || heads.isEmpty else { throw refuse("\(point.rawValue) has no heads: choose heads of q, k, v or z") }
        if !heads.isEmpty {
            let count = point.layout.rowShape(c.layer(block))[0]
            if let head = heads.first(where: { !(0..<count).contains($0) }) {
                throw refuse("head \(head) is not one of block \(block)'s \(count) \(point == .keys || point == .values ? "key-value " : "")heads (0…\(count - 1))")
            }
            guard headDimension == c.layer(block).headDimension else {
                throw refuse("the change was made for heads of \(headDimension) floats, but block \(block)'s have \(c.layer(block).headDimension)")
            }
        }
        let length = sliceLength(rowWidth: point.width(in: c, layer: block, contextLength: 0))
        let what = heads.isEmpty ? "\(point.rawValue) row of block \(block)" : "head of \(point.rawValue) in block \(block)"
        if let neuron = neurons.first(where: { !(0..<length).contains($0) }) {
            throw refuse("neuron \(neuron) is not one of the \(length) of a \(what) (0…\(length - 1))")
        }
        let chosen = neurons.isEmpty ? length : neurons.count
        guard addition.count <= 1 || addition.count == chosen else {
            throw refuse("the addition has \(addition.count) values, but \(chosen) elements of each \(what) are chosen: give one number or \(chosen)")
        }
        guard scale.isFinite, addition.allSatisfy(\.isFinite) else { throw refuse("the scale and the addition must be finite numbers") }
    }

    public func check(_ model: LanguageModel, tokens: Int) throws(ModelError) {
        if let position = positions?.first(where: { !(0..<tokens).contains($0) }) {
            throw ModelError(file: model.gguf.path, field: scale == 0 && addition.isEmpty ? "ablation" : "intervention",
                             reason: "position \(position) is not one of this run's \(tokens) positions (0…\(tokens - 1))")
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let length = sliceLength(rowWidth: width)
        let starts = heads.isEmpty ? [0] : heads.map { $0 * headDimension }
        for row in 0..<positions.count {
            if let chosen = self.positions, !chosen.contains(positions.lowerBound + row) { continue }
            for start in starts {
                let base = row * width + start
                if neurons.isEmpty {
                    for element in 0..<length {
                        let added = addition.isEmpty ? 0 : addition[addition.count == 1 ? 0 : element]
                        rows[base + element] = rows[base + element] * scale + added
                    }
                } else {
                    for (index, neuron) in neurons.enumerated() {
                        let added = addition.isEmpty ? 0 : addition[addition.count == 1 ? 0 : index]
                        rows[base + neuron] = rows[base + neuron] * scale + added
                    }
                }
            }
        }
    }
}
