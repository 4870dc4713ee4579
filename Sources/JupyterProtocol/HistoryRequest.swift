/// Content of `history_request`.
public struct HistoryRequest: Sendable, Codable, Equatable {
    /// Whether to return outputs too.
    public var output: Bool
    /// Whether to return the raw input.
    public var raw: Bool
    /// `range`, `tail` or `search`.
    public var accessType: String
    /// With `range`: the session (0 is the current one, negative counts back).
    public var session: Int?
    /// With `range`: the first line.
    public var start: Int?
    /// With `range`: the line after the last.
    public var stop: Int?
    /// With `tail` and `search`: how many entries.
    public var n: Int?
    /// With `search`: a glob pattern.
    public var pattern: String?
    /// With `search`: drop duplicate inputs.
    public var unique: Bool?

    enum CodingKeys: String, CodingKey {
        case output, raw, session, start, stop, n, pattern, unique
        case accessType = "hist_access_type"
    }

    /// Decodes the content; `output` and `raw` default to false, the access type to `tail`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        output = try container.decodeIfPresent(Bool.self, forKey: .output) ?? false
        raw = try container.decodeIfPresent(Bool.self, forKey: .raw) ?? true
        accessType = try container.decodeIfPresent(String.self, forKey: .accessType) ?? "tail"
        session = try container.decodeIfPresent(Int.self, forKey: .session)
        start = try container.decodeIfPresent(Int.self, forKey: .start)
        stop = try container.decodeIfPresent(Int.self, forKey: .stop)
        n = try container.decodeIfPresent(Int.self, forKey: .n)
        pattern = try container.decodeIfPresent(String.self, forKey: .pattern)
        unique = try container.decodeIfPresent(Bool.self, forKey: .unique)
    }
}

/// Content of `history_reply`.
public struct HistoryReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// `[session, line, input]` triples (or `[session, line, [input, output]]`).
    public var history: [[JSONValue]]

    /// Creates the content.
    public init(history: [[JSONValue]]) {
        self.history = history
    }
}
