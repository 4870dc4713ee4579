/// A response of `/v1/chat/completions` (`object` `chat.completion`), or one streamed chunk of
/// it (`chat.completion.chunk`, choices carrying a `delta` instead of a `message`).
public struct ChatCompletion: Codable, Sendable, Equatable {
    /// The response's id (the same in every chunk of a stream).
    public var id: String
    /// `chat.completion` or `chat.completion.chunk`.
    public var object: String
    /// Seconds since 1970.
    public var created: Int
    /// The model that answered.
    public var model: String
    /// The choices (one).
    public var choices: [ChatChoice]
    /// Token counts, in a whole response or the last chunk.
    public var usage: Usage?

    /// A whole response, or a chunk when `chunk`.
    public init(id: String, chunk: Bool, created: Int, model: String, choices: [ChatChoice], usage: Usage? = nil) {
        self.id = id
        object = chunk ? "chat.completion.chunk" : "chat.completion"
        self.created = created
        self.model = model
        self.choices = choices
        self.usage = usage
    }
}

/// One choice of a chat response: the whole message, or in a chunk the delta that extends it.
public struct ChatChoice: Codable, Sendable, Equatable {
    /// Index among the choices.
    public var index: Int
    /// The message (whole responses).
    public var message: WireChatMessage?
    /// The piece this chunk adds (streamed responses).
    public var delta: ChatDelta?
    /// Log-probabilities, when asked for.
    public var logprobs: ChatLogprobs?
    /// `stop`, `length` or `tool_calls`, when finished; null before.
    public var finishReason: String?

    /// A choice.
    public init(index: Int = 0, message: WireChatMessage? = nil, delta: ChatDelta? = nil, logprobs: ChatLogprobs? = nil, finishReason: String?) {
        self.index = index
        self.message = message
        self.delta = delta
        self.logprobs = logprobs
        self.finishReason = finishReason
    }

    enum CodingKeys: String, CodingKey {
        case index, message, delta, logprobs, finishReason = "finish_reason"
    }

    /// Writes `message` or `delta`, and `logprobs` and `finish_reason` as null when absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encodeIfPresent(message, forKey: .message)
        try container.encodeIfPresent(delta, forKey: .delta)
        try container.encode(logprobs, forKey: .logprobs)
        try container.encode(finishReason, forKey: .finishReason)
    }
}

/// What a streamed chunk adds to the message.
public struct ChatDelta: Codable, Sendable, Equatable {
    /// The role, in the first chunk.
    public var role: String?
    /// The text this chunk adds.
    public var content: String?
    /// The reasoning this chunk adds (llama-server's `reasoning_content`).
    public var reasoningContent: String?
    /// The tool calls this chunk adds.
    public var toolCalls: [WireToolCall]?

    /// A delta.
    public init(role: String? = nil, content: String? = nil, reasoningContent: String? = nil, toolCalls: [WireToolCall]? = nil) {
        self.role = role
        self.content = content
        self.reasoningContent = reasoningContent
        self.toolCalls = toolCalls
    }

    enum CodingKeys: String, CodingKey {
        case role, content, reasoningContent = "reasoning_content", toolCalls = "tool_calls"
    }
}

/// Chat log-probabilities: one entry per token.
public struct ChatLogprobs: Codable, Sendable, Equatable {
    /// The tokens, in order.
    public var content: [TokenLogprob]?

    /// Log-probabilities.
    public init(content: [TokenLogprob]?) {
        self.content = content
    }
}

/// A token's log-probability and the most likely alternatives at its position.
public struct TokenLogprob: Codable, Sendable, Equatable {
    /// The token's text.
    public var token: String
    /// Its log-probability.
    public var logprob: Double
    /// Its UTF-8 bytes.
    public var bytes: [Int]?
    /// The most likely tokens at this position.
    public var topLogprobs: [TopLogprob]

    /// An entry.
    public init(token: String, logprob: Double, bytes: [Int]?, topLogprobs: [TopLogprob]) {
        self.token = token
        self.logprob = logprob
        self.bytes = bytes
        self.topLogprobs = topLogprobs
    }

    enum CodingKeys: String, CodingKey {
        case token, logprob, bytes, topLogprobs = "top_logprobs"
    }

    /// Reads an entry; a missing `top_logprobs` is an empty list.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        logprob = try container.decode(Double.self, forKey: .logprob)
        bytes = try container.decodeIfPresent([Int].self, forKey: .bytes)
        topLogprobs = try container.decodeIfPresent([TopLogprob].self, forKey: .topLogprobs) ?? []
    }
}

/// One alternative token and its log-probability.
public struct TopLogprob: Codable, Sendable, Equatable {
    /// The token's text.
    public var token: String
    /// Its log-probability.
    public var logprob: Double
    /// Its UTF-8 bytes.
    public var bytes: [Int]?

    /// An alternative.
    public init(token: String, logprob: Double, bytes: [Int]?) {
        self.token = token
        self.logprob = logprob
        self.bytes = bytes
    }
}
