/// One message of a chat request or response. `content` may arrive as a string or as a list of
/// parts; the text parts are joined (other kinds of part are refused). An assistant message's
/// reasoning is `reasoning_content`, as llama-server gives and takes it. An assistant message may
/// carry tool calls (its content is then null when it says nothing), a `tool` message the id of
/// the call it answers.
public struct WireChatMessage: Codable, Sendable, Equatable {
    /// `system`, `user`, `assistant` or `tool`.
    public var role: String
    /// The text.
    public var content: String
    /// An assistant message's reasoning before its text (llama-server's `reasoning_content`),
    /// when it has one.
    public var reasoningContent: String?
    /// The tools an assistant message calls.
    public var toolCalls: [WireToolCall]?
    /// The call a `tool` message answers.
    public var toolCallID: String?
    /// The function whose result a `tool` message holds.
    public var name: String?

    /// A message.
    public init(role: String, content: String, reasoningContent: String? = nil, toolCalls: [WireToolCall]? = nil, toolCallID: String? = nil,
                name: String? = nil) {
        self.role = role
        self.content = content
        self.reasoningContent = reasoningContent
        self.toolCalls = toolCalls
        self.toolCallID = toolCallID
        self.name = name
    }

    private struct Part: Decodable {
        let type: String
        let text: String?
    }

    enum CodingKeys: String, CodingKey {
        case role, content, reasoningContent = "reasoning_content", toolCalls = "tool_calls", toolCallID = "tool_call_id", name
    }

    /// Writes the role, the content (null for a message of tool calls only), and the reasoning,
    /// tool calls, call id and name when there are.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(role, forKey: .role)
        if content.isEmpty, toolCalls?.isEmpty == false {
            try container.encodeNil(forKey: .content)
        } else {
            try container.encode(content, forKey: .content)
        }
        try container.encodeIfPresent(reasoningContent, forKey: .reasoningContent)
        try container.encodeIfPresent(toolCalls, forKey: .toolCalls)
        try container.encodeIfPresent(toolCallID, forKey: .toolCallID)
        try container.encodeIfPresent(name, forKey: .name)
    }

    /// Reads a message whose content is a string, null, or a list of text parts.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        role = try container.decode(String.self, forKey: .role)
        reasoningContent = try container.decodeIfPresent(String.self, forKey: .reasoningContent)
        toolCalls = try container.decodeIfPresent([WireToolCall].self, forKey: .toolCalls)
        toolCallID = try container.decodeIfPresent(String.self, forKey: .toolCallID)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        if let text = try? container.decodeIfPresent(String.self, forKey: .content) {
            content = text
        } else if let parts = try? container.decode([Part].self, forKey: .content) {
            content = try parts.map { part in
                guard part.type == "text", let text = part.text else {
                    throw DecodingError.dataCorruptedError(forKey: .content, in: container, debugDescription: "only text parts are supported, got '\(part.type)'")
                }
                return text
            }.joined()
        } else if try container.decodeNil(forKey: .content) {
            content = ""
        } else {
            throw DecodingError.dataCorruptedError(forKey: .content, in: container, debugDescription: "content must be a string or a list of text parts")
        }
    }
}
