/// A message of a conversation.
public struct ChatMessage: Sendable, Equatable {
    /// `system`, `user`, `assistant` or `tool`.
    public var role: String
    /// The text.
    public var content: String
    /// Whether this is a reply cut short by an interrupt (not shown to the template).
    public var isPartial: Bool

    /// Creates a message.
    public init(role: String, content: String, isPartial: Bool = false) {
        self.role = role
        self.content = content
        self.isPartial = isPartial
    }
}
