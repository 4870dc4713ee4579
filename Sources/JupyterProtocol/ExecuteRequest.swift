/// Content of `execute_request`.
public struct ExecuteRequest: Sendable, Codable, Equatable {
    /// The cell's source.
    public var code: String
    /// Run without broadcasting `execute_input` or the result, and without counting.
    public var silent: Bool
    /// Whether this execution counts and is recorded in history (forced false when silent).
    public var storeHistory: Bool
    /// Expressions to evaluate after the code, by name.
    public var userExpressions: [String: JSONValue]
    /// Whether the code may ask for input on the stdin channel.
    public var allowStdin: Bool
    /// Whether queued executions are aborted when this one fails.
    public var stopOnError: Bool

    enum CodingKeys: String, CodingKey {
        case code, silent
        case storeHistory = "store_history"
        case userExpressions = "user_expressions"
        case allowStdin = "allow_stdin"
        case stopOnError = "stop_on_error"
    }

    /// Creates a request; the defaults are the protocol's.
    public init(code: String, silent: Bool = false, storeHistory: Bool = true, userExpressions: [String: JSONValue] = [:],
                allowStdin: Bool = true, stopOnError: Bool = true) {
        self.code = code
        self.silent = silent
        self.storeHistory = storeHistory
        self.userExpressions = userExpressions
        self.allowStdin = allowStdin
        self.stopOnError = stopOnError
    }

    /// Decodes a request: `code` is required, every other field has the protocol's default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        silent = try container.decodeIfPresent(Bool.self, forKey: .silent) ?? false
        storeHistory = try container.decodeIfPresent(Bool.self, forKey: .storeHistory) ?? !silent
        userExpressions = try container.decodeIfPresent([String: JSONValue].self, forKey: .userExpressions) ?? [:]
        allowStdin = try container.decodeIfPresent(Bool.self, forKey: .allowStdin) ?? true
        stopOnError = try container.decodeIfPresent(Bool.self, forKey: .stopOnError) ?? true
    }
}

/// Content of `execute_input`, broadcast on IOPub when a cell starts.
public struct ExecuteInput: Sendable, Codable, Equatable {
    /// The cell's source.
    public var code: String
    /// The cell's execution count.
    public var executionCount: Int

    enum CodingKeys: String, CodingKey {
        case code
        case executionCount = "execution_count"
    }

    /// Creates the content.
    public init(code: String, executionCount: Int) {
        self.code = code
        self.executionCount = executionCount
    }
}
