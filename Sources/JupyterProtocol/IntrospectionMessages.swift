/// Content of `complete_request`.
public struct CompleteRequest: Sendable, Codable, Equatable {
    /// The code being edited.
    public var code: String
    /// The cursor position, in Unicode code points.
    public var cursorPos: Int

    enum CodingKeys: String, CodingKey {
        case code
        case cursorPos = "cursor_pos"
    }

    /// Creates the content.
    public init(code: String, cursorPos: Int) {
        self.code = code
        self.cursorPos = cursorPos
    }
}

/// Content of `complete_reply`.
public struct CompleteReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// The candidate completions.
    public var matches: [String]
    /// Start of the text the matches replace.
    public var cursorStart: Int
    /// End of the text the matches replace.
    public var cursorEnd: Int
    /// Extra information about the matches.
    public var metadata: [String: JSONValue] = [:]

    enum CodingKeys: String, CodingKey {
        case status, matches, metadata
        case cursorStart = "cursor_start"
        case cursorEnd = "cursor_end"
    }

    /// Creates the content.
    public init(matches: [String], cursorStart: Int, cursorEnd: Int) {
        self.matches = matches
        self.cursorStart = cursorStart
        self.cursorEnd = cursorEnd
    }
}

/// Content of `inspect_request`.
public struct InspectRequest: Sendable, Codable, Equatable {
    /// The code being edited.
    public var code: String
    /// The cursor position, in Unicode code points.
    public var cursorPos: Int
    /// 0 for a summary, 1 for more detail.
    public var detailLevel: Int

    enum CodingKeys: String, CodingKey {
        case code
        case cursorPos = "cursor_pos"
        case detailLevel = "detail_level"
    }

    /// Creates the content.
    public init(code: String, cursorPos: Int, detailLevel: Int = 0) {
        self.code = code
        self.cursorPos = cursorPos
        self.detailLevel = detailLevel
    }

    /// Decodes the content; `detail_level` defaults to 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        cursorPos = try container.decode(Int.self, forKey: .cursorPos)
        detailLevel = try container.decodeIfPresent(Int.self, forKey: .detailLevel) ?? 0
    }
}

/// Content of `inspect_reply`.
public struct InspectReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// Whether anything was found.
    public var found: Bool
    /// The information by MIME type.
    public var data: [String: JSONValue]
    /// Metadata by MIME type.
    public var metadata: [String: JSONValue] = [:]

    /// Creates the content.
    public init(found: Bool, data: [String: JSONValue]) {
        self.found = found
        self.data = data
    }
}

/// Content of `is_complete_request`.
public struct IsCompleteRequest: Sendable, Codable, Equatable {
    /// The code typed so far.
    public var code: String

    /// Creates the content.
    public init(code: String) {
        self.code = code
    }
}

/// Content of `is_complete_reply`.
public struct IsCompleteReply: Sendable, Codable, Equatable {
    /// `complete`, `incomplete`, `invalid` or `unknown`.
    public var status: String
    /// With `incomplete`, the indentation for the next line.
    public var indent: String?

    /// Creates the content.
    public init(status: String, indent: String? = nil) {
        self.status = status
        self.indent = indent
    }
}
