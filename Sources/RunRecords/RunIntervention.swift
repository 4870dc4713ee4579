/// A change made inside a generation's forward passes (`ablate`, `patch` in cells), as the run
/// log keeps it so `replay` makes it again.
public struct RunIntervention: Codable, Sendable, Equatable {
    /// What kind of change.
    public enum Kind: String, Codable, Sendable {
        /// Zeroing a point (`heads` lists the heads zeroed at "heads").
        case ablate
        /// Activation patching from another run (`source`) at `positions`.
        case patch
        /// Scaling and adding to a point's elements (`scale`, `addition`).
        case edit
        /// Setting one feature of a sparse autoencoder (`sae`, `feature`, `value`) at the SAE's
        /// point and block, the SAE's error term kept.
        case feature
    }

    /// What kind of change.
    public var kind: Kind
    /// The point's name (TransformerLens's: "resid_post", "attn_out", "z", …; earlier runs'
    /// "resid", "ffn_out", "heads" name the same points).
    public var point: String
    /// The block.
    public var block: Int
    /// For an ablation or edit of heads: the heads changed.
    public var heads: [Int]?
    /// The positions changed (nil for an ablation or edit: every position).
    public var positions: [Int]?
    /// For an ablation or edit: the elements changed within each row or head (nil: all).
    public var neurons: [Int]?
    /// For an edit: what the chosen elements are multiplied by (nil: 1).
    public var scale: Double?
    /// For an edit: what is added after scaling — one number, or one per chosen element.
    public var addition: [Float]?
    /// For a patch across runs of different lengths: the source's position for each of
    /// `positions` (nil: the same positions).
    public var sourcePositions: [Int]?
    /// For a patch: the token ids of the run whose activations are patched in.
    public var source: [Int32]?
    /// For a feature: the SAE's path (absolute).
    public var sae: String?
    /// For a feature: the input scale folded into the SAE when it was read (nil: none).
    public var saeInputScale: Double?
    /// For a feature: the feature set.
    public var feature: Int?
    /// For a feature: the activation it is set to.
    public var value: Double?

    /// An ablation of `point` in `block` (of `heads`, `positions`, `neurons` only, when given).
    public init(ablating point: String, block: Int, heads: [Int]? = nil, positions: [Int]? = nil, neurons: [Int]? = nil) {
        self.init(editing: point, block: block, heads: heads, positions: positions, neurons: neurons, scale: nil, addition: nil)
        kind = .ablate
    }

    /// An edit of `point` in `block`: its chosen elements (of `heads`, `positions`, `neurons`
    /// only, when given) times `scale`, plus `addition`.
    public init(editing point: String, block: Int, heads: [Int]? = nil, positions: [Int]? = nil, neurons: [Int]? = nil, scale: Double?, addition: [Float]?) {
        kind = .edit
        self.point = point
        self.block = block
        self.heads = heads
        self.positions = positions
        self.neurons = neurons
        self.scale = scale
        self.addition = addition
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

    /// Setting `feature` of the SAE at `sae` (read with `saeInputScale` folded in, when given),
    /// whose hook is `point` in `block`, to `value` at `positions` (every position when nil).
    public init(settingFeature feature: Int, of sae: String, saeInputScale: Double? = nil, point: String, block: Int, positions: [Int]? = nil, value: Double) {
        kind = .feature
        self.point = point
        self.block = block
        self.positions = positions
        self.sae = sae
        self.saeInputScale = saeInputScale
        self.feature = feature
        self.value = value
    }
}
