/// A request to `/v1/completions`: text after a plain prompt.
public struct CompletionRequest: Codable, Sendable, Equatable, GenerationRequestFields {
    /// The served model's name (optional for servers with one model).
    public var model: String?
    /// The prompt.
    public var prompt: String
    /// Sampling and stopping.
    public var sampling = SamplingFields()
    /// Steering inside the model (Lumen's fields).
    public var steering = SteeringFields()
    /// Whether to stream chunks as Server-Sent Events.
    public var stream: Bool?
    /// Streaming options.
    public var streamOptions: StreamOptions?
    /// How many most likely alternatives to report per token (0: only the chosen token's).
    public var logprobs: Int?
    /// Whether the answer starts with the prompt (with `logprobs`, the prompt's tokens scored).
    public var echo: Bool?
    /// Number of choices; only 1 is supported.
    public var n: Int?
    /// The end user's identifier; accepted and ignored.
    public var user: String?

    /// A request.
    public init(model: String?, prompt: String, sampling: SamplingFields, stream: Bool? = nil, streamOptions: StreamOptions? = nil, logprobs: Int? = nil,
                echo: Bool? = nil) {
        self.model = model
        self.prompt = prompt
        self.sampling = sampling
        self.stream = stream
        self.streamOptions = streamOptions
        self.logprobs = logprobs
        self.echo = echo
    }

    enum CodingKeys: String, GenerationRequestKeys, CaseIterable {
        case model, prompt, stream, streamOptions = "stream_options", logprobs, echo, n, user
    }

    /// Every field this request knows; a server refuses others.
    public static let fieldNames = Set(CodingKeys.allCases.map(\.rawValue)).union(SamplingFields.fieldNames).union(SteeringFields.fieldNames).union(ConstraintFields.fieldNames)

    /// Reads the request's fields and the sampling fields beside them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prompt = try container.decode(String.self, forKey: .prompt)
        logprobs = try container.decodeIfPresent(Int.self, forKey: .logprobs)
        echo = try container.decodeIfPresent(Bool.self, forKey: .echo)
        try decodeSharedFields(from: container, decoder: decoder)
    }

    /// Writes the request's fields and the sampling fields beside them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(prompt, forKey: .prompt)
        try container.encodeIfPresent(logprobs, forKey: .logprobs)
        try container.encodeIfPresent(echo, forKey: .echo)
        try encodeSharedFields(into: &container, encoder: encoder)
    }
}
