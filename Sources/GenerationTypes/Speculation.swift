/// Speculative decoding: tokens proposed cheaply (drafts) are verified by the model in one
/// forward pass, and each position's token is drawn from the model's own logits exactly as
/// without drafts — so the output is the one a plain generation with the same seed gives, only
/// sooner when drafts are right. Drafts come from the context (prompt lookup, llama.cpp's
/// `llama-lookup`) or from a smaller draft model of the same vocabulary (`llama-speculative`).
public struct Speculation: Sendable, Equatable {
    /// Draft by prompt lookup: the tokens that followed the latest earlier occurrence of the
    /// last `lookupNgram` tokens (llama.cpp's `--lookup-ngram`); nil: no lookup.
    public var lookupNgram: Int?
    /// The most tokens drafted at once (`--draft-max`); fewer after drafts fail, more again as
    /// they are accepted.
    public var draftMax: Int
    /// A draft model stops drafting when its likeliest token is less likely than this
    /// (`--draft-p-min`).
    public var draftProbabilityMin: Float

    /// Creates a description of speculative decoding: by default up to 16 tokens at once (drafts
    /// start at four and double while they are accepted), a draft model's down to 0.75.
    public init(lookupNgram: Int? = nil, draftMax: Int = 16, draftProbabilityMin: Float = 0.75) {
        self.lookupNgram = lookupNgram
        self.draftMax = draftMax
        self.draftProbabilityMin = draftProbabilityMin
    }
}
