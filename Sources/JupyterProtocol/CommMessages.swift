/// Content of `comm_info_request`.
public struct CommInfoRequest: Sendable, Codable, Equatable {
    /// Only comms of this target, when given.
    public var targetName: String?

    enum CodingKeys: String, CodingKey {
        case targetName = "target_name"
    }

    /// Creates the content.
    public init(targetName: String? = nil) {
        self.targetName = targetName
    }
}

/// Content of `comm_info_reply`.
public struct CommInfoReply: Sendable, Codable, Equatable {
    /// One open comm: its target.
    public struct Comm: Sendable, Codable, Equatable {
        /// The target the comm was opened for.
        public var targetName: String

        enum CodingKeys: String, CodingKey {
            case targetName = "target_name"
        }

        /// Creates the entry.
        public init(targetName: String) {
            self.targetName = targetName
        }
    }

    /// Always `ok`.
    public var status = "ok"
    /// The open comms, by id.
    public var comms: [String: Comm]

    /// Creates the content.
    public init(comms: [String: Comm] = [:]) {
        self.comms = comms
    }
}

/// Content of `comm_open`, `comm_msg` and `comm_close`, which differ only in `comm_open`'s
/// target: one type, so each direction reads and writes one shape.
public struct CommContent: Sendable, Codable, Equatable {
    /// The comm's id.
    public var commID: String
    /// The target a `comm_open` is for; nil in the other two.
    public var targetName: String?
    /// The message's data (always an object on the wire).
    public var data: [String: JSONValue]

    enum CodingKeys: String, CodingKey {
        case data
        case commID = "comm_id"
        case targetName = "target_name"
    }

    /// Creates the content.
    public init(commID: String, targetName: String? = nil, data: [String: JSONValue] = [:]) {
        self.commID = commID
        self.targetName = targetName
        self.data = data
    }

    /// Decodes the content: `comm_id` is required, `data` defaults to empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        commID = try container.decode(String.self, forKey: .commID)
        targetName = try container.decodeIfPresent(String.self, forKey: .targetName)
        data = try container.decodeIfPresent([String: JSONValue].self, forKey: .data) ?? [:]
    }
}
