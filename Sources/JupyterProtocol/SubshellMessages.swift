/// Content of `create_subshell_reply` (JEP 91).
public struct CreateSubshellReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// The new subshell's id.
    public var subshellID: String

    enum CodingKeys: String, CodingKey {
        case status
        case subshellID = "subshell_id"
    }

    /// Creates the content.
    public init(subshellID: String) {
        self.subshellID = subshellID
    }
}

/// Content of `list_subshell_reply`: the ids of the subshells there are (the main shell is not
/// one).
public struct ListSubshellReply: Sendable, Codable, Equatable {
    /// Always `ok`.
    public var status = "ok"
    /// The subshells' ids, oldest first.
    public var subshellID: [String]

    enum CodingKeys: String, CodingKey {
        case status
        case subshellID = "subshell_id"
    }

    /// Creates the content.
    public init(subshellIDs: [String]) {
        subshellID = subshellIDs
    }
}

/// Content of `delete_subshell_request`.
public struct DeleteSubshellRequest: Sendable, Codable, Equatable {
    /// The subshell to delete.
    public var subshellID: String

    enum CodingKeys: String, CodingKey {
        case subshellID = "subshell_id"
    }

    /// Creates the content.
    public init(subshellID: String) {
        self.subshellID = subshellID
    }
}

/// A control reply that failed, as ipykernel words it for the subshell requests: `status:
/// error` with the reason in `evalue`.
public struct ControlErrorReply: Sendable, Codable, Equatable {
    /// Always `error`.
    public var status = "error"
    /// What went wrong.
    public var evalue: String

    /// Creates the content.
    public init(evalue: String) {
        self.evalue = evalue
    }
}
