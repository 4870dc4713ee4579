import HTTPTypes
import OpenAIAPI

/// A request the server refuses: the HTTP status and the message, sent in OpenAI's error shape.
struct ServerError: Error {
    /// The status.
    let status: HTTPResponse.Status
    /// The body.
    let body: APIErrorResponse
    /// Whether the client should retry later: the answer carries `Retry-After`.
    var retries = false

    /// 400: the request is malformed or asks for something unsupported (`param` names the field).
    static func invalid(_ message: String, param: String? = nil) -> ServerError {
        ServerError(status: .badRequest, body: APIErrorResponse(message: message, type: "invalid_request_error", param: param))
    }

    /// 401: no valid bearer token.
    static let unauthorized = ServerError(status: .unauthorized, body: APIErrorResponse(
        message: "missing or incorrect API key (send it as 'Authorization: Bearer KEY')", type: "authentication_error", code: "invalid_api_key"))

    /// 403: the request comes from a web page of an origin the server does not allow.
    static func forbidden(_ message: String) -> ServerError {
        ServerError(status: .forbidden, body: APIErrorResponse(message: message, type: "invalid_request_error", code: "origin_not_allowed"))
    }

    /// 415: the body is not sent as JSON.
    static func unsupportedMediaType(_ message: String) -> ServerError {
        ServerError(status: .unsupportedMediaType, body: APIErrorResponse(message: message, type: "invalid_request_error"))
    }

    /// 404: no served model has this name.
    static func unknownModel(_ name: String, served: [String]) -> ServerError {
        ServerError(status: .notFound, body: APIErrorResponse(message: "model '\(name)' is not served here (served: \(served.joined(separator: ", ")))",
                                                              type: "invalid_request_error", param: "model", code: "model_not_found"))
    }

    /// 413: the body is larger than the server accepts.
    static func tooLarge(_ limit: Int) -> ServerError {
        ServerError(status: .contentTooLarge, body: APIErrorResponse(message: "the request body is larger than \(limit) bytes", type: "invalid_request_error"))
    }

    /// 408: the request's body did not all arrive in time.
    static func timedOut(_ limit: Duration) -> ServerError {
        ServerError(status: .requestTimeout, body: APIErrorResponse(message: "the request body did not arrive within \(limit)", type: "invalid_request_error"))
    }

    /// 503: the server cannot take the request now; `retry`: later it may.
    static func unavailable(_ message: String, retry: Bool = false) -> ServerError {
        ServerError(status: .serviceUnavailable, body: APIErrorResponse(message: message, type: "server_error", code: retry ? "server_overloaded" : nil), retries: retry)
    }

    /// 500: the model failed.
    static func failed(_ message: String) -> ServerError {
        ServerError(status: .internalServerError, body: APIErrorResponse(message: message, type: "server_error"))
    }
}
