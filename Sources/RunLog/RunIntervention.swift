/// A change made inside a generation's forward passes (`ablate`, `patch` in cells), as the run
/// log keeps it so `replay` makes it again.
public struct RunIntervention: Codable, Sendable, Equatable {
    /// What kind of change.
    public enum Kind: String, Codable, Sendable {
        /// Zeroing a point (`heads` lists the heads zeroed at "heads").
        case ablate
        /// Activation patching from another run (`source`) at `positions`.
        case patch
    }

    /// What kind of change.
    public var kind: Kind
    /// The point's name (TransformerLens's: "resid_post", "attn_out", "z", …; earlier runs'
    /// "resid", "ffn_out", "heads" name the same points).
    public var point: String
    /// The block.
    public var block: Int
    /// For an ablation of heads: the heads zeroed.
    public var heads: [Int]?
    /// For a patch: the positions patched.
    public var positions: [Int]?
    /// For a patch across runs of different lengths: the source's position for each of
    /// `positions` (nil: the same positions).
    public var sourcePositions: [Int]?
    /// For a patch: the token ids of the run whose activations are patched in.
    public var source: [Int32]?

    /// An ablation of `point` in `block` (of `heads` only, when given).
    public init(ablating point: String, block: Int, heads: [Int]? = nil) {
        kind = .ablate
        self.point = point
        self.block = block
        self.heads = heads
    }

    /// A patch of `point` in `block` at `positions` from the run of `source` (at
    /// `sourcePositions` of it, when given).
    public init(patching point: String, block: Int, positions: [Int], source: [Int32], sourcePositions: [Int]? = nil) {
        kind = .patch
        self.point = point
        self.block = block
        self.positions = positions
        self.source = source
        self.sourcePositions = sourcePositions
    }
}
