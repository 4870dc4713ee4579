/// Content of `shutdown_request` and `shutdown_reply`.
public struct ShutdownContent: Sendable, Codable, Equatable {
    /// Present in replies: always `ok`.
    public var status: String?
    /// Whether the client will restart the kernel.
    public var restart: Bool

    /// Creates the content.
    public init(status: String? = nil, restart: Bool) {
        self.status = status
        self.restart = restart
    }

    /// Decodes the content; `restart` defaults to false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decodeIfPresent(String.self, forKey: .status)
        restart = try container.decodeIfPresent(Bool.self, forKey: .restart) ?? false
    }
}

/// A reply carrying nothing but `status: ok` (`interrupt_reply`).
public struct StatusReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"

    /// Creates the content.
    public init() {}
}

/// Content of `comm_info_reply`.
public struct CommInfoReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// The open comms, by id.
    public var comms: [String: JSONValue]

    /// Creates the content.
    public init(comms: [String: JSONValue] = [:]) {
        self.comms = comms
    }
}

/// Content of `comm_open`, as far as the kernel reads it.
public struct CommOpen: Sendable, Codable, Equatable {
    /// The comm's id.
    public var commID: String
    /// The target the front end wants to reach.
    public var targetName: String

    enum CodingKeys: String, CodingKey {
        case commID = "comm_id"
        case targetName = "target_name"
    }
}

/// Content of `comm_close`.
public struct CommClose: Sendable, Codable, Equatable {
    /// The comm's id.
    public var commID: String
    /// Data for the other side.
    public var data: [String: JSONValue]

    enum CodingKeys: String, CodingKey {
        case data
        case commID = "comm_id"
    }

    /// Creates the content.
    public init(commID: String, data: [String: JSONValue] = [:]) {
        self.commID = commID
        self.data = data
    }
}
