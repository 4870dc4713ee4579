import GGUF

/// Activation patching: replaces the activations at one point of one block, at chosen
/// positions, with those another run captured there (a clean prompt's, patched into a corrupted
/// one's pass) at the same positions or at positions of its own (runs of different lengths).
public struct ActivationPatch: SiteHook {
    /// Where: any point but `.attentionProbabilities` (which the pass does not read back).
    public let point: ActivationPoint
    /// The block.
    public let block: Int
    /// The source run's rows at `point` of `block`, a row of `width` floats per position.
    public let source: [Float]
    /// The floats of one row.
    public let width: Int
    /// The source position each patched position takes its row from, by patched position.
    public let sources: [Int: Int]
    /// Whether the positions were given for both runs (else each takes the source's row at its
    /// own position, and the runs must be of one length).
    public let mapsPositions: Bool

    /// Patches `source` (rows of `width` floats, one per position of the source run) into
    /// `point` of `block` at `positions`, each from the source's row at the same index of `from`
    /// (nil: at the same position, in a run of the source's length).
    public init(_ point: ActivationPoint, block: Int, source: [Float], width: Int, positions: [Int], from: [Int]? = nil) {
        self.point = point
        self.block = block
        self.source = source
        self.width = width
        mapsPositions = from != nil
        sources = Dictionary(zip(positions, from ?? positions), uniquingKeysWith: { _, last in last })
    }

    /// The positions patched.
    public var positions: Set<Int> { Set(sources.keys) }

    public func check(_ model: LanguageModel) throws(ModelError) {
        let c = model.configuration
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "patch", reason: reason) }
        if let misfit = c.blockMisfit(block) { throw refuse(misfit) }
        guard point != .attentionProbabilities else { throw refuse("attention probabilities cannot be patched: the pass does not read them back") }
        guard point.layout.perBlock else { throw refuse("\(point.rawValue) cannot be patched in a block") }
        if ActivationPoint.attentionPoints.contains(point), let misfit = c.attentionMisfit([block]) { throw refuse(misfit) }
        if let misfit = c.absenceMisfit(point, blocks: [block]) { throw refuse(misfit) }
        let expected = point.width(in: c, layer: block, contextLength: 0)
        guard width == expected else {
            throw refuse("the patched rows have \(width) floats, but the model's \(point.rawValue) rows have \(expected)")
        }
        let rows = source.count / max(1, width)
        if let position = sources.values.sorted().first(where: { !(0..<rows).contains($0) }) {
            throw refuse("position \(position) is not one of the source's \(rows) positions (0…\(rows - 1))")
        }
    }

    public func check(_ model: LanguageModel, tokens: Int) throws(ModelError) {
        func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "patch", reason: reason) }
        let rows = source.count / max(1, width)
        guard mapsPositions || rows == tokens else {
            throw refuse("the source run has \(rows) tokens and this one \(tokens): give positions: (this run's) and from: (the source's) to patch across runs of different lengths")
        }
        if let position = positions.sorted().first(where: { !(0..<tokens).contains($0) }) {
            throw refuse("position \(position) is not one of this run's \(tokens) positions (0…\(tokens - 1))")
        }
    }

    public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        guard width == self.width else { return }
        for (row, position) in positions.enumerated() {
            guard let from = sources[position], (from + 1) * width <= source.count else { continue }
            for column in 0..<width { rows[row * width + column] = source[from * width + column] }
        }
    }
}
