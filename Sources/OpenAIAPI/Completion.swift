/// A response of `/v1/completions`, whole or one streamed chunk (the API uses one shape for both).
public struct Completion: Codable, Sendable, Equatable {
    /// The response's id (the same in every chunk of a stream).
    public var id: String
    /// `text_completion`.
    public var object: String
    /// Seconds since 1970.
    public var created: Int
    /// The model that answered.
    public var model: String
    /// The choices (one).
    public var choices: [CompletionChoice]
    /// Token counts, in a whole response or the last chunk.
    public var usage: Usage?

    /// A response.
    public init(id: String, created: Int, model: String, choices: [CompletionChoice], usage: Usage? = nil) {
        self.id = id
        object = "text_completion"
        self.created = created
        self.model = model
        self.choices = choices
        self.usage = usage
    }
}

/// One choice of a completion: its text (or the chunk's piece of it), log-probabilities, and why
/// it ended (in the last chunk).
public struct CompletionChoice: Codable, Sendable, Equatable {
    /// Index among the choices.
    public var index: Int
    /// The text.
    public var text: String
    /// Log-probabilities, when asked for.
    public var logprobs: CompletionLogprobs?
    /// `stop` or `length`, when finished; null before.
    public var finishReason: String?

    /// A choice.
    public init(index: Int = 0, text: String, logprobs: CompletionLogprobs? = nil, finishReason: String?) {
        self.index = index
        self.text = text
        self.logprobs = logprobs
        self.finishReason = finishReason
    }

    enum CodingKeys: String, CodingKey {
        case index, text, logprobs, finishReason = "finish_reason"
    }

    /// Writes every field, `finish_reason` and `logprobs` as null when absent, as OpenAI does.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(text, forKey: .text)
        try container.encode(logprobs, forKey: .logprobs)
        try container.encode(finishReason, forKey: .finishReason)
    }
}

/// The legacy completions' log-probabilities: parallel lists, one entry per token, as OpenAI and
/// vLLM send them. llama.cpp's llama-server sends completions' log-probabilities in the chat
/// completions' shape instead (`content`, one entry per token with its `top_logprobs`); both are
/// read, the second into `content` with the lists filled from it.
public struct CompletionLogprobs: Codable, Sendable, Equatable {
    /// Each token's text.
    public var tokens: [String]
    /// Each token's log-probability.
    public var tokenLogprobs: [Double?]
    /// The most likely alternatives at each position, text to log-probability.
    public var topLogprobs: [[String: Double]?]?
    /// Each token's offset in the text.
    public var textOffset: [Int]?
    /// The entries in the chat completions' shape, when the server sent that shape (its
    /// alternatives keep their order and their duplicates, which `topLogprobs` cannot).
    public var content: [TokenLogprob]?

    /// Log-probabilities.
    public init(tokens: [String], tokenLogprobs: [Double?], topLogprobs: [[String: Double]?]?, textOffset: [Int]?) {
        self.tokens = tokens
        self.tokenLogprobs = tokenLogprobs
        self.topLogprobs = topLogprobs
        self.textOffset = textOffset
    }

    enum CodingKeys: String, CodingKey {
        case tokens, tokenLogprobs = "token_logprobs", topLogprobs = "top_logprobs", textOffset = "text_offset", content
    }

    /// Reads either shape.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if !container.contains(.tokens), let content = try container.decodeIfPresent([TokenLogprob].self, forKey: .content) {
            self.init(tokens: content.map(\.token), tokenLogprobs: content.map(\.logprob),
                      topLogprobs: content.map { Dictionary($0.topLogprobs.map { ($0.token, $0.logprob) }, uniquingKeysWith: max) }, textOffset: nil)
            self.content = content
            return
        }
        self.init(tokens: try container.decode([String].self, forKey: .tokens),
                  tokenLogprobs: try container.decode([Double?].self, forKey: .tokenLogprobs),
                  topLogprobs: try container.decodeIfPresent([[String: Double]?].self, forKey: .topLogprobs),
                  textOffset: try container.decodeIfPresent([Int].self, forKey: .textOffset))
    }

    /// Writes the legacy lists (and `content` when it was read).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tokens, forKey: .tokens)
        try container.encode(tokenLogprobs, forKey: .tokenLogprobs)
        try container.encodeIfPresent(topLogprobs, forKey: .topLogprobs)
        try container.encodeIfPresent(textOffset, forKey: .textOffset)
        try container.encodeIfPresent(content, forKey: .content)
    }
}
