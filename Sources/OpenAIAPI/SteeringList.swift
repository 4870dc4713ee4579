/// The response of Lumen's `GET /control-vectors` and `GET /saes`: what a server can
/// steer requests with, by name.
public struct SteeringList<Entry: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// `list`.
    public var object: String
    /// The entries, by name.
    public var data: [Entry]

    /// A list.
    public init(data: [Entry]) {
        object = "list"
        self.data = data
    }
}

/// A control vector a server loaded (`--control-vector-file NAME=FILE`).
public struct ControlVectorCard: Codable, Sendable, Equatable {
    /// Its name, as `control_vectors` gives it.
    public var name: String
    /// The residual stream's width it is for.
    public var width: Int
    /// The blocks it has a direction for, from 0.
    public var blocks: [Int]
    /// Each of those directions' length.
    public var norms: [Double]

    /// A vector's card.
    public init(name: String, width: Int, blocks: [Int], norms: [Double]) {
        self.name = name
        self.width = width
        self.blocks = blocks
        self.norms = norms
    }
}

/// A sparse autoencoder a server loaded (`--sae NAME=PATH`).
public struct SAECard: Codable, Sendable, Equatable {
    /// Its name, as `features` gives it.
    public var name: String
    /// The hook it reads and writes, in TransformerLens' names (`blocks.3.hook_resid_post`).
    public var hook: String
    /// SAELens' architecture name (`standard`, `jumprelu`, `topk`).
    public var architecture: String
    /// The width of a row it reads.
    public var dIn: Int
    /// How many features it has.
    public var dSAE: Int

    /// An SAE's card.
    public init(name: String, hook: String, architecture: String, dIn: Int, dSAE: Int) {
        self.name = name
        self.hook = hook
        self.architecture = architecture
        self.dIn = dIn
        self.dSAE = dSAE
    }

    enum CodingKeys: String, CodingKey {
        case name, hook, architecture, dIn = "d_in", dSAE = "d_sae"
    }
}
