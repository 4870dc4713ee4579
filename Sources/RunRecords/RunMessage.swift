/// One message of a logged conversation.
public struct RunMessage: Codable, Sendable, Equatable {
    /// `system`, `user` or `assistant`.
    public var role: String
    /// The text.
    public var content: String

    /// A message.
    public init(role: String, content: String) {
        self.role = role
        self.content = content
    }
}
