import GGUF

/// Activation patching: replaces the activations at one point of one block, at chosen
/// positions, with those another run captured there (a clean prompt's, patched into a corrupted
/// one's pass).
public struct ActivationPatch: SiteHook {
    /// Where: any point but `.attentionProbabilities` (which the pass does not read back).
    public let point: ActivationPoint
    /// The block.
    public let block: Int
    /// The source run's rows at `point` of `block`, a row of `width` floats per position.
    public let source: [Float]
    /// The floats of one row.
    public let width: Int
    /// The positions patched (each below the source's row count).
    public let positions: Set<Int>

    /// Patches `source` (rows of `width` floats, one per position of the source run) into
    /// `point` of `block` at `positions`.
    public init(_ point: ActivationPoint, block: Int, source: [Float], width: Int, positions: Set<Int>) {
        self.point = point
        self.block = block
        self.source = source
        self.width = width
        self.positions = positions
    }

    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "patch", reason: reason) }
        if let misfit = c.blockMisfit(block) { throw refuse(misfit) }
        guard point != .attentionProbabilities else { throw refuse("attention probabilities cannot be patched: the pass does not read them back") }
        let expected = point.width(in: c, contextLength: 0)
        guard width == expected else {
            throw refuse("the patched rows have \(width) floats, but the model's \(point.rawValue) rows have \(expected)")
        }
        let rows = source.count / max(1, width)
        if let position = positions.first(where: { !(0..<rows).contains($0) }) {
            throw refuse("position \(position) is not one of the source's \(rows) positions (0…\(rows - 1))")
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        guard width == self.width else { return }
        for (row, position) in positions.enumerated() where self.positions.contains(position) && (position + 1) * width <= source.count {
            for column in 0..<width { rows[row * width + column] = source[position * width + column] }
        }
    }
}
