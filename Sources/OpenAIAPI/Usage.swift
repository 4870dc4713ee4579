/// Token counts of a request, as the server counted them.
public struct Usage: Codable, Sendable, Equatable {
    /// Tokens in the prompt.
    public var promptTokens: Int
    /// Tokens generated.
    public var completionTokens: Int
    /// Their sum.
    public var totalTokens: Int

    /// Counts; the total is their sum.
    public init(promptTokens: Int, completionTokens: Int) {
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
        totalTokens = promptTokens + completionTokens
    }

    enum CodingKeys: String, CodingKey {
        case promptTokens = "prompt_tokens", completionTokens = "completion_tokens", totalTokens = "total_tokens"
    }
}
