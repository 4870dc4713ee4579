/// The sampling and stopping fields shared by completion and chat requests. Besides OpenAI's own,
/// `top_k`, `min_p` and `repeat_penalty`, which llama-server and vLLM accept, and llama-server's
/// `repeat_last_n`.
public struct SamplingFields: Codable, Sendable, Equatable {
    /// Most tokens to generate.
    public var maxTokens: Int?
    /// Sampling temperature; 0 is greedy.
    public var temperature: Double?
    /// Nucleus sampling mass.
    public var topP: Double?
    /// Keep only the k most likely tokens.
    public var topK: Int?
    /// Drop tokens below this fraction of the most likely one's probability.
    public var minP: Double?
    /// Penalty on recently generated tokens.
    public var repeatPenalty: Double?
    /// How many recent tokens the penalties look at.
    public var repeatLastN: Int?
    /// Subtracted from a recent token's logit per occurrence.
    public var frequencyPenalty: Double?
    /// Subtracted from a recent token's logit once.
    public var presencePenalty: Double?
    /// Added to chosen tokens' logits.
    public var logitBias: LogitBiasField?
    /// Seed of the sampler.
    public var seed: Int?
    /// Strings that end the generation.
    public var stop: StopSequences?

    /// Fields; nil ones are left out of the JSON.
    public init(maxTokens: Int? = nil, temperature: Double? = nil, topP: Double? = nil, topK: Int? = nil, minP: Double? = nil,
                repeatPenalty: Double? = nil, repeatLastN: Int? = nil, frequencyPenalty: Double? = nil, presencePenalty: Double? = nil,
                logitBias: LogitBiasField? = nil, seed: Int? = nil, stop: StopSequences? = nil) {
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.repeatLastN = repeatLastN
        self.frequencyPenalty = frequencyPenalty
        self.presencePenalty = presencePenalty
        self.logitBias = logitBias
        self.seed = seed
        self.stop = stop
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case maxTokens = "max_tokens", temperature, topP = "top_p", topK = "top_k", minP = "min_p", repeatPenalty = "repeat_penalty",
             repeatLastN = "repeat_last_n", frequencyPenalty = "frequency_penalty", presencePenalty = "presence_penalty", logitBias = "logit_bias", seed, stop
    }

    /// The JSON names of these fields.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.rawValue))
}
