import Foundation

/// One logged run: a generation (from any entry point), a perplexity or a comparison of two
/// models, with everything needed to find it, read it and run it again.
public struct RunRecord: Codable, Sendable, Equatable {
    /// `time` to the millisecond: the precision the log and its JSON export keep.
    public static func millisecond(_ time: Date) -> Date {
        Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// The record's number in the log (set when it is written).
    public var id: Int64?
    /// When the run finished.
    public var time: Date
    /// What the run did.
    public var kind: RunKind
    /// The entry point: `generate`, `say`, `batch`, `compare`, `perplexity`, `compareModels`,
    /// `lumen generate`, `lumen chat`, `lumen perplexity`, `lumen kld`.
    public var entry: String
    /// Where it ran.
    public var origin: RunOrigin
    /// The model.
    public var model: RunModel
    /// The base model of a comparison.
    public var baseModel: RunModel?
    /// The sampling options, with the seed actually used (generations).
    public var options: RunOptions?
    /// The prompt (a generation), the last message (a conversation turn) or the scored text.
    public var prompt: String
    /// The conversation's messages, for a conversation turn.
    public var messages: [RunMessage]?
    /// The prompt as the model saw it, after the chat template.
    public var renderedPrompt: String?
    /// The generated text.
    public var output: String
    /// The generated token ids.
    public var tokenIDs: [Int32]
    /// Each generated token's log-probability.
    public var logProbabilities: [Float]
    /// Why generation ended: `length`, `eos`, `stop`, `cancelled`, `interrupted`.
    public var finishReason: String
    /// Prompt tokens processed.
    public var promptTokens: Int
    /// Tokens generated.
    public var generatedTokens: Int
    /// Prompt processing speed, tokens per second.
    public var promptTokensPerSecond: Double
    /// Generation speed, tokens per second.
    public var tokensPerSecond: Double
    /// Seconds until the first generated token.
    public var timeToFirstToken: Double
    /// Whether the run was interrupted.
    public var interrupted: Bool
    /// The figure a measurement gives: the perplexity, or the mean KL divergence.
    public var value: Double?
    /// The other figures of a measurement, by name.
    public var figures: [String: Double]?

    /// A generation's record.
    public init(time: Date = Date(), kind: RunKind = .generation, entry: String, origin: RunOrigin, model: RunModel, baseModel: RunModel? = nil,
                options: RunOptions? = nil, prompt: String, messages: [RunMessage]? = nil, renderedPrompt: String? = nil, output: String = "",
                tokenIDs: [Int32] = [], logProbabilities: [Float] = [], finishReason: String = "", promptTokens: Int = 0, generatedTokens: Int = 0,
                promptTokensPerSecond: Double = 0, tokensPerSecond: Double = 0, timeToFirstToken: Double = 0, interrupted: Bool = false,
                value: Double? = nil, figures: [String: Double]? = nil) {
        self.time = Self.millisecond(time)
        self.kind = kind
        self.entry = entry
        self.origin = origin
        self.model = model
        self.baseModel = baseModel
        self.options = options
        self.prompt = prompt
        self.messages = messages
        self.renderedPrompt = renderedPrompt
        self.output = output
        self.tokenIDs = tokenIDs
        self.logProbabilities = logProbabilities
        self.finishReason = finishReason
        self.promptTokens = promptTokens
        self.generatedTokens = generatedTokens
        self.promptTokensPerSecond = promptTokensPerSecond
        self.tokensPerSecond = tokensPerSecond
        self.timeToFirstToken = timeToFirstToken
        self.interrupted = interrupted
        self.value = value
        self.figures = figures
    }
}
