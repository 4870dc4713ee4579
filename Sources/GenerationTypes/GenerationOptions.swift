/// How to pick each next token.
public struct SamplingOptions: Sendable, Equatable {
    /// Softmax temperature; 0 or less means greedy (argmax).
    public var temperature: Float
    /// Keep only the `topK` most likely tokens (0: all).
    public var topK: Int
    /// Keep the smallest set of tokens whose probabilities add up to `topP` (1: all).
    public var topP: Float
    /// Drop tokens less likely than `minP` times the most likely one (0: none).
    public var minP: Float
    /// Divide positive logits (multiply negative ones) of recently seen tokens by this (1: off).
    public var repeatPenalty: Float
    /// How many recent tokens the repetition penalty looks at.
    public var repeatWindow: Int
    /// The random seed; the same seed gives the same tokens, whatever the thread count.
    public var seed: UInt64

    /// Creates options; the defaults are llama.cpp's.
    public init(temperature: Float = 0.8, topK: Int = 40, topP: Float = 0.95, minP: Float = 0.05,
                repeatPenalty: Float = 1.0, repeatWindow: Int = 64, seed: UInt64 = 0) {
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.repeatWindow = repeatWindow
        self.seed = seed
    }

    /// Always the most likely token.
    public static let greedy = SamplingOptions(temperature: 0)
}

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
