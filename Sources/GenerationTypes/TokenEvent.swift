/// Why a generation ended.
public enum FinishReason: String, Sendable, Equatable {
    /// `maxTokens` were generated.
    case length
    /// The model chose its end-of-sequence token.
    case eos
    /// A stop string appeared.
    case stop
    /// The consumer cancelled (or dropped the stream).
    case cancelled
    /// The context was full.
    case context
    /// The caller's time limit ran out (`generate(timeout:)`); the text so far is kept.
    case timeout

    /// The OpenAI API's `finish_reason` for each reason (the API has only `stop` and `length`).
    private static let apiNames: [FinishReason: String] = [.length: "length", .eos: "stop", .stop: "stop", .cancelled: "stop", .context: "length", .timeout: "length"]

    /// This reason as the OpenAI API's `finish_reason`.
    public var apiName: String { Self.apiNames[self] ?? "stop" }

    /// The reason an OpenAI-compatible server gave. Its `stop` covers both the model's end and a
    /// stop string; it is read as a stop string when the request had some.
    public init(apiName: String, requestHadStopStrings: Bool) {
        self = switch apiName {
        case "stop": requestHadStopStrings ? .stop : .eos
        default: FinishReason(rawValue: apiName) ?? .eos
        }
    }
}

/// One generated token.
public struct GeneratedToken: Sendable, Equatable {
    /// The token id.
    public var id: Int32
    /// The text this token adds to the output; may be empty while an incomplete UTF-8 character
    /// or a possible stop string is held back, and may include text held back earlier.
    public var text: String
    /// The token's log-probability under the model.
    public var logProbability: Float
    /// The logits the token was picked from, for the first `GenerationOptions.recordedLogits` steps.
    public var logits: [Float]? = nil

    /// A token.
    public init(id: Int32, text: String, logProbability: Float, logits: [Float]? = nil) {
        self.id = id
        self.text = text
        self.logProbability = logProbability
        self.logits = logits
    }
}

/// Figures about a finished generation.
public struct GenerationSummary: Sendable, Equatable {
    /// Tokens in the prompt (BOS included).
    public var promptTokens: Int
    /// Prompt tokens whose keys and values were already cached from an earlier generation (a
    /// conversation's previous turns), so were not processed again.
    public var reusedPromptTokens = 0
    /// Tokens generated.
    public var generatedTokens: Int
    /// Seconds from the start to the first generated token.
    public var timeToFirstToken: Double
    /// Prompt tokens processed per second.
    public var promptTokensPerSecond: Double
    /// Tokens generated per second, after the first.
    public var generationTokensPerSecond: Double
    /// Why generation ended.
    public var finishReason: FinishReason
    /// Drafted tokens checked against the tokens the model drew (speculative decoding).
    public var draftedTokens = 0
    /// Drafted tokens the model accepted (each the token it drew itself).
    public var acceptedTokens = 0

    /// `40 drafted, 31 accepted (78%)` after speculative decoding; nil without drafts.
    public var draftSummary: String? {
        guard draftedTokens > 0 else { return nil }
        return "\(draftedTokens) drafted, \(acceptedTokens) accepted (\(acceptedTokens * 100 / draftedTokens)%)"
    }

    /// Creates a summary.
    public init(promptTokens: Int, generatedTokens: Int, timeToFirstToken: Double, promptTokensPerSecond: Double,
                generationTokensPerSecond: Double, finishReason: FinishReason) {
        self.promptTokens = promptTokens
        self.generatedTokens = generatedTokens
        self.timeToFirstToken = timeToFirstToken
        self.promptTokensPerSecond = promptTokensPerSecond
        self.generationTokensPerSecond = generationTokensPerSecond
        self.finishReason = finishReason
    }
}

/// What a generation stream carries: tokens as they are produced, then a summary.
public enum TokenEvent: Sendable, Equatable {
    case token(GeneratedToken)
    case finished(GenerationSummary)
}
