/// Content of `execute_reply`: `ok`, `error` (with the exception's name, value and traceback) or
/// `aborted`, each with the execution count.
public struct ExecuteReply: Sendable, Codable, Equatable {
    /// How the execution ended.
    public enum Status: String, Sendable, Codable {
        case ok, error, aborted
    }

    /// How the execution ended.
    public var status: Status
    /// The execution count of the cell.
    public var executionCount: Int
    /// Pager and other payloads (only with `ok`).
    public var payload: [JSONValue]?
    /// Results of `user_expressions` (only with `ok`).
    public var userExpressions: [String: JSONValue]?
    /// The error's name (only with `error`).
    public var ename: String?
    /// The error's message (only with `error`).
    public var evalue: String?
    /// The error's traceback lines (only with `error`).
    public var traceback: [String]?

    enum CodingKeys: String, CodingKey {
        case status, payload, ename, evalue, traceback
        case executionCount = "execution_count"
        case userExpressions = "user_expressions"
    }

    /// A successful execution.
    public static func ok(executionCount: Int, payload: [JSONValue] = [], userExpressions: [String: JSONValue] = [:]) -> ExecuteReply {
        ExecuteReply(status: .ok, executionCount: executionCount, payload: payload, userExpressions: userExpressions)
    }

    /// A failed execution.
    public static func error(executionCount: Int, _ content: ErrorContent) -> ExecuteReply {
        ExecuteReply(status: .error, executionCount: executionCount, ename: content.ename, evalue: content.evalue, traceback: content.traceback)
    }

    /// An execution that was not run because an earlier one failed.
    public static func aborted(executionCount: Int) -> ExecuteReply {
        ExecuteReply(status: .aborted, executionCount: executionCount)
    }
}
