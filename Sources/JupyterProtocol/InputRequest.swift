/// Content of `input_request`, sent on the stdin channel.
public struct InputRequest: Sendable, Codable, Equatable {
    /// The prompt to show.
    public var prompt: String
    /// Whether the typed text should be hidden.
    public var password: Bool

    /// Creates the content.
    public init(prompt: String, password: Bool) {
        self.prompt = prompt
        self.password = password
    }
}

/// Content of `input_reply`.
public struct InputReply: Sendable, Codable, Equatable {
    /// What the user typed.
    public var value: String

    /// Creates the content.
    public init(value: String) {
        self.value = value
    }
}
