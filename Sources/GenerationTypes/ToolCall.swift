/// A call of a tool (a function the request offered) that a model's reply asks for.
public struct ToolCall: Sendable, Equatable {
    /// The call's id, which the tool's answer names (`tool_call_id`).
    public var id: String
    /// The function's name.
    public var name: String
    /// The arguments as the model wrote them: the text of a JSON object (or of as much of one as
    /// was generated, when the output ended inside it).
    public var arguments: String

    /// A call.
    public init(id: String, name: String, arguments: String) {
        self.id = id
        self.name = name
        self.arguments = arguments
    }
}
