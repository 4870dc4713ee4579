import Foundation
import Hummingbird

/// Which cross-site requests `lumen serve` answers. A web page can make a browser send a "simple"
/// request — a POST with a `text/plain` body, no preflight — to any address the browser reaches,
/// loopback included, so without an API key any page could use the server. Hence: without a key,
/// a request whose `Origin` is not the server's own is refused (403) unless `--cors-origin`
/// allows it, and a body must be `application/json` (415), which a browser sends cross-site only
/// after a preflight. Allowed origins get CORS headers, and their preflights (`OPTIONS`) are
/// answered as browsers expect. With a key, a browser cannot send it cross-site without a
/// preflight, which only allowed origins pass.
public struct CrossSitePolicy: Sendable {
    /// Origins allowed to call from a browser (`scheme://host[:port]`); `*` allows any.
    public let allowedOrigins: Set<String>

    /// A policy allowing `allowedOrigins` besides the server's own.
    public init(allowedOrigins: [String] = []) {
        self.allowedOrigins = Set(allowedOrigins.map { $0 == "*" ? $0 : Self.origin(of: $0) ?? $0 })
    }

    /// `text` as browsers send an origin: scheme and host in lower case, the port only when it is
    /// not the scheme's default; nil when it is not an http(s) origin.
    public static func origin(of text: String) -> String? {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil else { return nil }
        let defaultPort = scheme == "http" ? 80 : 443
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost.lowercased())" + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    /// Whether `host` (an address or name to listen on) is a loopback one.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// Whether a request from `origin` to the server reached as `authority` (its Host) is
    /// the server's own page's or an allowed one.
    func allows(origin: String, authority: String?) -> Bool {
        if allowedOrigins.contains("*") { return true }
        guard let normalized = Self.origin(of: origin) else { return false }
        if allowedOrigins.contains(normalized) { return true }
        guard let authority, let own = Self.origin(of: normalized.prefix { $0 != ":" } + "://" + authority) else { return false }
        return own == normalized
    }
}

/// Applies a `CrossSitePolicy` to every request before its route runs.
struct CrossSiteMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CrossSitePolicy
    /// Whether requests need a key (then the browser's own rules keep other sites out).
    let keyed: Bool
    /// Turns a refusal into the server's error response.
    let refuse: @Sendable (ServerError) -> Response

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let origin = request.headers[.origin]
        let allowed = origin.map { policy.allows(origin: $0, authority: request.head.authority) }
        if request.method == .options {
            guard let origin, allowed == true else {
                return refuse(.forbidden("preflight from origin \(origin ?? "(none)") refused: start lumen serve with --cors-origin \(origin ?? "ORIGIN") to allow it"))
            }
            return Response(status: .noContent, headers: corsHeaders(origin).merging([
                .accessControlAllowMethods: "GET, POST, OPTIONS", .accessControlAllowHeaders: "Authorization, Content-Type",
                .accessControlMaxAge: "600",
            ]))
        }
        if !keyed {
            if let origin, allowed == false {
                return refuse(.forbidden("requests from origin \(origin) are refused: start lumen serve with --cors-origin \(origin) (or an API key) to allow them"))
            }
            if request.method == .post {
                let type = request.headers[.contentType].map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased() }
                guard type == "application/json" else {
                    return refuse(.unsupportedMediaType("the body must be sent as Content-Type: application/json, got \(type ?? "none")"))
                }
            }
        }
        var response = try await next(request, context)
        if let origin, allowed == true {
            response.headers.append(contentsOf: corsHeaders(origin))
        }
        return response
    }

    /// The headers that let a page of `origin` read the answer.
    private func corsHeaders(_ origin: String) -> HTTPFields {
        [.accessControlAllowOrigin: origin, .vary: "Origin"]
    }
}

extension HTTPFields {
    /// These fields with `other`'s added.
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var merged = self
        merged.append(contentsOf: other)
        return merged
    }
}
