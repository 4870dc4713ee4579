import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import OpenAIAPI

/// One serving engine's OpenAI-compatible API (vLLM, llama-server, TGI, Ollama, `lumen serve`):
/// its base URL (`http://host:8000/v1`), API key and timeouts. Sends requests, retrying as
/// `retry` allows, and turns error responses into `RemoteError`s carrying the server's message.
public struct RemoteEndpoint: Sendable {
    /// The base URL, without a trailing slash; paths such as `/completions` follow it.
    public let baseURL: String
    let key: APIKey?
    /// Seconds allowed to connect.
    public let connectTimeout: Double
    /// Seconds allowed without a byte, and for the response's head after connecting (a whole
    /// answer's head comes only when the work is done).
    public let readTimeout: Double
    /// When to send a request again.
    public let retry: RetryPolicy

    /// The largest error or JSON body read, in bytes.
    static let maximumBodyBytes = 16 << 20

    /// An endpoint at `url` (http or https, with a host).
    public init(url: String, key: APIKey?, connectTimeout: Double = 10, readTimeout: Double = 300, retry: RetryPolicy = RetryPolicy()) throws(RemoteError) {
        let trimmed = url.hasSuffix("/") ? String(url.dropLast()) : url
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host, !host.isEmpty else {
            throw RemoteError(endpoint: url, reason: "not an http:// or https:// URL with a host")
        }
        guard components.user == nil, components.password == nil else {
            throw RemoteError(endpoint: "\(scheme)://\(host)", reason: "credentials in the URL are not accepted; pass apiKey: instead")
        }
        guard connectTimeout > 0, readTimeout > 0, retry.attempts >= 1 else {
            throw RemoteError(endpoint: trimmed, reason: "timeouts must be positive and attempts at least 1")
        }
        baseURL = trimmed
        self.key = key
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.retry = retry
    }

    private var client: HTTPClient { HTTPClients.shared.client(connectTimeout: connectTimeout, readTimeout: readTimeout) }

    /// Sends `body` (JSON) to `path` with `method`, retrying busy answers, and returns the
    /// response once its status is a success; its body may still be streaming.
    func send(_ method: HTTPMethod, _ path: String, body: Data? = nil, streaming: Bool = false) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Accept", value: streaming ? "text/event-stream" : "application/json")
        if let key { request.headers.add(name: "Authorization", value: key.authorization) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        var attempt = 1
        while true {
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, timeout: .milliseconds(Int64((connectTimeout + readTimeout) * 1000)))
            } catch {
                throw failure(error)
            }
            let status = Int(response.status.code)
            if (200..<300).contains(status) { return response }
            if RetryPolicy.retriedStatuses.contains(status), attempt < retry.attempts {
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
                try await Task.sleep(for: .seconds(retry.delay(after: attempt, retryAfter: retryAfter)))
                attempt += 1
                continue
            }
            let message = await Self.errorMessage(response)
            throw RemoteError(endpoint: baseURL, status: status, reason: message + (attempt > 1 ? " (after \(attempt) attempts)" : ""))
        }
    }

    /// Sends a request and decodes its JSON answer as `T`.
    func json<T: Decodable>(_ type: T.Type, _ method: HTTPMethod, _ path: String, body: Data? = nil) async throws -> T {
        let response = try await send(method, path, body: body)
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: Self.maximumBodyBytes)
        } catch {
            throw failure(error)
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes.readableBytesView))
        } catch {
            throw RemoteError(endpoint: baseURL, status: Int(response.status.code), reason: "unexpected answer from \(path): \(DecodingFailure.describe(error))")
        }
    }

    /// A transport error as a `RemoteError` naming the endpoint; cancellation passes through.
    func failure(_ error: any Error) -> any Error {
        if error is CancellationError || error is RemoteError { return error }
        if let connection = error as? NIOConnectionError {
            let causes = connection.connectionErrors.map { failure in
                (failure.error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(failure.error)"
            }
            return RemoteError(endpoint: baseURL, reason: "could not connect to \(connection.host):\(connection.port)" + (causes.first.map { ": \($0)" } ?? ""))
        }
        if let io = error as? IOError {
            return RemoteError(endpoint: baseURL, reason: "connection failed: \(String(cString: strerror(io.errnoCode)))")
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .cancelled: return CancellationError()
            case .readTimeout: return RemoteError(endpoint: baseURL, reason: "no data for \(Self.seconds(readTimeout)) (read timeout)")
            case .connectTimeout: return RemoteError(endpoint: baseURL, reason: "could not connect within \(Self.seconds(connectTimeout)) (connect timeout)")
            case .deadlineExceeded: return RemoteError(endpoint: baseURL, reason: "no answer within \(Self.seconds(connectTimeout + readTimeout))")
            case .remoteConnectionClosed: return RemoteError(endpoint: baseURL, reason: "the server closed the connection")
            default: break
            }
        }
        return RemoteError(endpoint: baseURL, reason: "\(error)")
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// The server's own words from an error response: OpenAI's `error.message`, an `error`
    /// string (Ollama), a `detail` (FastAPI), or the body's text; else the status's phrase.
    static func errorMessage(_ response: HTTPClientResponse) async -> String {
        let body = (try? await response.body.collect(upTo: 64 << 10)).map { Data($0.readableBytesView) } ?? Data()
        struct Loose: Decodable {
            struct Inner: Decodable { let message: String? }
            let error: Inner?
            let detail: String?
        }
        struct Plain: Decodable { let error: String }
        if let loose = try? JSONDecoder().decode(Loose.self, from: body), let message = loose.error?.message ?? loose.detail {
            return message
        }
        if let plain = try? JSONDecoder().decode(Plain.self, from: body) { return plain.error }
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if !text.isEmpty { return text.count > 500 ? String(text.prefix(500)) + "…" : text }
        return response.status.reasonPhrase
    }
}
