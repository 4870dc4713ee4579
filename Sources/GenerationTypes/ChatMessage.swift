/// A message of a conversation.
public struct ChatMessage: Sendable, Equatable {
    /// `system`, `user`, `assistant` or `tool`.
    public var role: String
    /// The text.
    public var content: String
    /// Whether this is a reply cut short by an interrupt (not shown to the template).
    public var isPartial: Bool
    /// A reply's reasoning before its text, when the model gave one (`reasoning_content`).
    public var reasoning: String?
    /// The tools an assistant's reply called.
    public var toolCalls: [ToolCall]
    /// The call a `tool` message answers.
    public var toolCallID: String?
    /// The function whose result a `tool` message holds, when given.
    public var name: String?

    /// Creates a message.
    public init(role: String, content: String, isPartial: Bool = false, reasoning: String? = nil, toolCalls: [ToolCall] = [],
                toolCallID: String? = nil, name: String? = nil) {
        self.role = role
        self.content = content
        self.isPartial = isPartial
        self.reasoning = reasoning
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
        self.name = name
    }
}
