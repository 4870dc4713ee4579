/// One message of a chat request or response. `content` may arrive as a string or as a list of
/// parts; the text parts are joined (other kinds of part are refused).
public struct WireChatMessage: Codable, Sendable, Equatable {
    /// `system`, `user`, `assistant` or `tool`.
    public var role: String
    /// The text.
    public var content: String

    /// A message.
    public init(role: String, content: String) {
        self.role = role
        self.content = content
    }

    private struct Part: Decodable {
        let type: String
        let text: String?
    }

    enum CodingKeys: String, CodingKey {
        case role, content
    }

    /// Reads a message whose content is a string, null, or a list of text parts.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        role = try container.decode(String.self, forKey: .role)
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
