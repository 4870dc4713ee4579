/// Content of a `stream` message: text written to stdout or stderr.
public struct StreamContent: Sendable, Codable, Equatable {
    /// `stdout` or `stderr`.
    public var name: String
    /// The text written.
    public var text: String

    /// Creates the content.
    public init(name: String, text: String) {
        self.name = name
        self.text = text
    }
}

/// Content of `display_data`, `update_display_data` and `execute_result`.
public struct DisplayContent: Sendable, Codable, Equatable {
    /// The representations by MIME type.
    public var data: [String: JSONValue]
    /// Metadata by MIME type.
    public var metadata: [String: JSONValue]
    /// Data that is not stored with the notebook, such as `display_id`.
    public var transient: [String: JSONValue]?
    /// The execution count (only with `execute_result`).
    public var executionCount: Int?

    enum CodingKeys: String, CodingKey {
        case data, metadata, transient
        case executionCount = "execution_count"
    }

    /// Creates the content; a `displayID` goes into `transient`.
    public init(data: [String: JSONValue], metadata: [String: JSONValue] = [:], displayID: String? = nil, executionCount: Int? = nil) {
        self.data = data
        self.metadata = metadata
        self.transient = displayID.map { ["display_id": .string($0)] }
        self.executionCount = executionCount
    }
}

/// Content of an `error` message and of error replies.
public struct ErrorContent: Sendable, Codable, Equatable {
    /// Always `error` in replies.
    public var status = "error"
    /// The error's name, e.g. `NameError`.
    public var ename: String
    /// The error's message.
    public var evalue: String
    /// Lines of traceback, possibly with ANSI colours.
    public var traceback: [String]

    /// Creates the content.
    public init(ename: String, evalue: String, traceback: [String]) {
        self.ename = ename
        self.evalue = evalue
        self.traceback = traceback
    }
}

/// Content of `status`.
public struct StatusContent: Sendable, Codable, Equatable {
    /// `starting`, `busy` or `idle`.
    public var executionState: String

    enum CodingKeys: String, CodingKey {
        case executionState = "execution_state"
    }

    /// Creates the content.
    public init(executionState: String) {
        self.executionState = executionState
    }
}

/// Content of `clear_output`.
public struct ClearOutputContent: Sendable, Codable, Equatable {
    /// Wait for the next output before clearing.
    public var wait: Bool

    /// Creates the content.
    public init(wait: Bool) {
        self.wait = wait
    }
}
