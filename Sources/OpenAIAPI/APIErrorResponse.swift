/// An error in OpenAI's shape: `{"error": {"message": …, "type": …, "param": …, "code": …}}`.
public struct APIErrorResponse: Codable, Sendable, Equatable {
    /// The error.
    public var error: Detail

    /// The body of an error response.
    public struct Detail: Codable, Sendable, Equatable {
        /// What went wrong, for people.
        public var message: String
        /// Its kind: `invalid_request_error`, `authentication_error`, `server_error`, …
        public var type: String?
        /// The request field at fault, if one is.
        public var param: String?
        /// A machine-readable code.
        public var code: String?
    }

    /// An error.
    public init(message: String, type: String, param: String? = nil, code: String? = nil) {
        error = Detail(message: message, type: type, param: param, code: code)
    }
}
