/// A failure talking to a serving engine, naming the endpoint (its URL, never the key) and, for
/// an error response, the HTTP status and the server's own message verbatim.
public struct RemoteError: Error, Sendable, CustomStringConvertible {
    /// The endpoint's URL.
    public let endpoint: String
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// What went wrong.
    public let reason: String

    /// An error at `endpoint`.
    public init(endpoint: String, status: Int? = nil, reason: String) {
        self.endpoint = endpoint
        self.status = status
        self.reason = reason
    }

    /// `http://host:8080/v1: HTTP 404: model 'x' not found`.
    public var description: String {
        "\(endpoint): " + (status.map { "HTTP \($0): " } ?? "") + reason
    }
}
