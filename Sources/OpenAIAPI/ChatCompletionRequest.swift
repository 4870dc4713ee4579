/// A request to `/v1/chat/completions`: the next assistant message after `messages`, rendered by
/// the server's chat template.
public struct ChatCompletionRequest: Codable, Sendable, Equatable, GenerationRequestFields {
    /// The served model's name (optional for servers with one model).
    public var model: String?
    /// The conversation so far.
    public var messages: [WireChatMessage]
    /// Sampling and stopping.
    public var sampling = SamplingFields()
    /// Steering inside the model (Lumen's fields).
    public var steering = SteeringFields()
    /// The newer name of `max_tokens`; either is accepted.
    public var maxCompletionTokens: Int?
    /// Whether to stream chunks as Server-Sent Events.
    public var stream: Bool?
    /// Streaming options.
    public var streamOptions: StreamOptions?
    /// Whether to report each token's log-probability.
    public var logprobs: Bool?
    /// How many most likely alternatives to report per token.
    public var topLogprobs: Int?
    /// Number of choices; only 1 is supported.
    public var n: Int?
    /// The end user's identifier; accepted and ignored.
    public var user: String?
    /// How the model's reasoning comes back, as llama-server's `reasoning_format`: `none` leaves
    /// it in the content; any other (`auto`, the default, `deepseek`) puts it in
    /// `reasoning_content`.
    public var reasoningFormat: String?
    /// More variables for the chat template (`{"enable_thinking": false}`), as llama-server takes them.
    public var chatTemplateKwargs: [String: TemplateArgument]?
    /// The tools offered and how they may be called, read from the body by `ToolFields` (whose
    /// fields keep their schemas' order), not by this type's decoder.
    public var tools: ToolFields.Request?

    /// A request.
    public init(model: String?, messages: [WireChatMessage], sampling: SamplingFields, stream: Bool? = nil, streamOptions: StreamOptions? = nil,
                logprobs: Bool? = nil, topLogprobs: Int? = nil) {
        self.model = model
        self.messages = messages
        self.sampling = sampling
        self.stream = stream
        self.streamOptions = streamOptions
        self.logprobs = logprobs
        self.topLogprobs = topLogprobs
    }

    enum CodingKeys: String, GenerationRequestKeys, CaseIterable {
        case model, messages, maxCompletionTokens = "max_completion_tokens", stream, streamOptions = "stream_options", logprobs,
             topLogprobs = "top_logprobs", n, user, reasoningFormat = "reasoning_format", chatTemplateKwargs = "chat_template_kwargs"
    }

    /// Every field this request knows; a server refuses others.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.rawValue)).union(SamplingFields.fieldNames).union(SteeringFields.fieldNames).union(ConstraintFields.fieldNames)
        .union(ToolFields.fieldNames)

    /// The most tokens to generate, from either field.
    public var tokenLimit: Int? { maxCompletionTokens ?? sampling.maxTokens }

    /// Reads the request's fields and the sampling fields beside them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messages = try container.decode([WireChatMessage].self, forKey: .messages)
        maxCompletionTokens = try container.decodeIfPresent(Int.self, forKey: .maxCompletionTokens)
        logprobs = try container.decodeIfPresent(Bool.self, forKey: .logprobs)
        topLogprobs = try container.decodeIfPresent(Int.self, forKey: .topLogprobs)
        reasoningFormat = try container.decodeIfPresent(String.self, forKey: .reasoningFormat)
        chatTemplateKwargs = try container.decodeIfPresent([String: TemplateArgument].self, forKey: .chatTemplateKwargs)
        try decodeSharedFields(from: container, decoder: decoder)
    }

    /// Writes the request's fields and the sampling fields beside them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        try container.encodeIfPresent(maxCompletionTokens, forKey: .maxCompletionTokens)
        try container.encodeIfPresent(logprobs, forKey: .logprobs)
        try container.encodeIfPresent(topLogprobs, forKey: .topLogprobs)
        try container.encodeIfPresent(reasoningFormat, forKey: .reasoningFormat)
        try container.encodeIfPresent(chatTemplateKwargs, forKey: .chatTemplateKwargs)
        try encodeSharedFields(into: &container, encoder: encoder)
    }
}

/// A value given to a chat template by a request (`chat_template_kwargs`): a boolean, a number
/// or a string.
public enum TemplateArgument: Codable, Sendable, Equatable {
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)

    /// Reads a boolean, number or string; anything else is refused.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a chat template argument must be a boolean, a number or a string")
        }
    }

    /// Writes the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        }
    }
}
