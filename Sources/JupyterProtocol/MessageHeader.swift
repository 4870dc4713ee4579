import Foundation

/// The header of a Jupyter message (and, for replies and output, of its parent request).
public struct MessageHeader: Sendable, Codable, Equatable {
    /// Unique id of this message.
    public var messageID: String
    /// Id of the session that sent it.
    public var session: String
    /// The sender's user name.
    public var username: String
    /// ISO 8601 creation time.
    public var date: String
    /// The message type, e.g. `execute_request`.
    public var messageType: String
    /// The messaging protocol version, e.g. `5.4`.
    public var version: String
    /// The subshell a shell request is for (JEP 91); nil for the main shell and in every
    /// message the kernel sends.
    public var subshellID: String?

    enum CodingKeys: String, CodingKey {
        case messageID = "msg_id"
        case session
        case username
        case date
        case messageType = "msg_type"
        case version
        case subshellID = "subshell_id"
    }

    /// Creates a header from all of its fields.
    public init(
        messageID: String, session: String, username: String, date: String, messageType: String, version: String, subshellID: String? = nil
    ) {
        self.subshellID = subshellID
        self.messageID = messageID
        self.session = session
        self.username = username
        self.date = date
        self.messageType = messageType
        self.version = version
    }

    /// Decodes a header; `msg_id` and `msg_type` are required, the rest default to empty, since
    /// some clients leave them out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        messageID = try container.decode(String.self, forKey: .messageID)
        messageType = try container.decode(String.self, forKey: .messageType)
        session = try container.decodeIfPresent(String.self, forKey: .session) ?? ""
        username = try container.decodeIfPresent(String.self, forKey: .username) ?? ""
        version = try container.decodeIfPresent(String.self, forKey: .version) ?? ""
        date = (try? container.decodeIfPresent(String.self, forKey: .date)) ?? ""
        subshellID = try container.decodeIfPresent(String.self, forKey: .subshellID)
    }
}
