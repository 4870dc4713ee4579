/// `stream_options`: whether a stream ends with a chunk carrying `usage`.
public struct StreamOptions: Codable, Sendable, Equatable {
    /// Send a last chunk with the token counts.
    public var includeUsage: Bool?

    /// Options.
    public init(includeUsage: Bool?) {
        self.includeUsage = includeUsage
    }

    enum CodingKeys: String, CodingKey {
        case includeUsage = "include_usage"
    }
}
