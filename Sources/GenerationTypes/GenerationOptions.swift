/// What to generate and when to stop.
public struct GenerationOptions: Sendable, Equatable {
    /// How tokens are picked.
    public var sampling: SamplingOptions
    /// The most tokens to generate.
    public var maxTokens: Int
    /// Stop when the text contains any of these (the stop string itself is not emitted).
    public var stopStrings: [String]
    /// Stop when the model picks its end-of-sequence token.
    public var stopAtEndOfSequence: Bool
    /// Teacher forcing: after step k, feed `forcedTokens[k]` instead of the token picked (which
    /// is still reported); past the list, the picked tokens are fed again.
    public var forcedTokens: [Int32] = []
    /// How many steps report their full logits (`GeneratedToken.logits`).
    public var recordedLogits = 0
    /// What the output must be (a grammar, JSON, a regular expression's match, a choice); nil for
    /// free text.
    public var constraint: OutputConstraint?
    /// Start from the whole longest prefix of the prompt the session's cache already holds,
    /// generated tokens included (a conversation's earlier turns): faster, but the logits may
    /// differ from a fresh read's in the last bits. Without it a generation still reuses that
    /// prefix's whole batches read as a prompt, exactly.
    public var reusesCachedPrefix = false
    /// Speculative decoding by prompt lookup or a draft model (`GenerationPipeline.draftModel`);
    /// nil: none. The output is the same either way.
    public var speculation: Speculation?
    /// Special tokens whose text the output shows, which it otherwise leaves out (llama.cpp's
    /// `preserved_tokens`: the markers a chat format's reasoning is split at).
    public var shownTokens: Set<Int32> = []

    /// Creates options.
    public init(sampling: SamplingOptions = SamplingOptions(), maxTokens: Int = 128, stopStrings: [String] = [], stopAtEndOfSequence: Bool = true) {
        self.sampling = sampling
        self.maxTokens = maxTokens
        self.stopStrings = stopStrings
        self.stopAtEndOfSequence = stopAtEndOfSequence
    }
}
