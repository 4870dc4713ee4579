/// An API key: sent as a bearer token and never shown. Printing, interpolating, dumping or
/// reflecting it gives `••••`, so it cannot reach a log, an error message, a notebook or the
/// history by accident.
public struct APIKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret; read only to build the `Authorization` header.
    let secret: String

    /// A key.
    public init(_ secret: String) {
        self.secret = secret
    }

    /// `••••`.
    public var description: String { "••••" }
    /// `••••`.
    public var debugDescription: String { "••••" }
    /// No children: reflection shows nothing of the secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// The `Authorization` header's value.
    var authorization: String { "Bearer " + secret }
}
