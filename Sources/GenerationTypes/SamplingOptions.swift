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
    /// How many recent tokens the repetition, frequency and presence penalties look at (llama.cpp's
    /// `--repeat-last-n`; the prompt's count).
    public var repeatWindow: Int
    /// Subtracted from a token's logit once for each time it is among the recent tokens (OpenAI's
    /// `frequency_penalty`, llama.cpp's `--frequency-penalty`; 0: off).
    public var frequencyPenalty: Float
    /// Subtracted from the logit of each token among the recent tokens, once (OpenAI's
    /// `presence_penalty`, llama.cpp's `--presence-penalty`; 0: off).
    public var presencePenalty: Float
    /// Added to these tokens' logits before anything else changes them (OpenAI's `logit_bias`,
    /// llama.cpp's `--logit-bias`); −∞ bans a token.
    public var logitBias: [Int32: Float]
    /// The random seed; the same seed gives the same tokens, whatever the thread count.
    public var seed: UInt64

    /// Creates options; the defaults are llama.cpp's.
    public init(temperature: Float = 0.8, topK: Int = 40, topP: Float = 0.95, minP: Float = 0.05,
                repeatPenalty: Float = 1.0, repeatWindow: Int = 64, frequencyPenalty: Float = 0, presencePenalty: Float = 0,
                logitBias: [Int32: Float] = [:], seed: UInt64 = 0) {
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.repeatWindow = repeatWindow
        self.frequencyPenalty = frequencyPenalty
        self.presencePenalty = presencePenalty
        self.logitBias = logitBias
        self.seed = seed
    }

    /// Always the most likely token.
    public static let greedy = SamplingOptions(temperature: 0)
}
