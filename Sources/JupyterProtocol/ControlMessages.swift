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
