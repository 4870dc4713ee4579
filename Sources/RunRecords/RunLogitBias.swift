/// One token's logit bias in a logged run.
public struct RunLogitBias: Codable, Sendable, Equatable {
    /// The token id.
    public var token: Int32
    /// The amount added to its logit; nil when the token was banned (−∞, which JSON cannot hold).
    public var bias: Double?

    /// An entry.
    public init(token: Int32, bias: Double?) {
        self.token = token
        self.bias = bias
    }
}
