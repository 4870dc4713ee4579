/// One value rendered in several representations, keyed by MIME type (`text/plain`,
/// `text/html`, `image/svg+xml`, …). JSON types (`application/json`, `*+json`) hold JSON text.
public struct MIMEBundle: Sendable, Equatable {
    /// The representations, by MIME type.
    public var data: [String: String]

    /// Creates a bundle from its representations.
    public init(_ data: [String: String]) {
        self.data = data
    }

    /// A bundle holding only plain text.
    public static func plainText(_ text: String) -> MIMEBundle {
        MIMEBundle(["text/plain": text])
    }

    /// The plain-text representation, which every bundle should have.
    public var plainText: String? { data["text/plain"] }

    /// Whether `mimeType` carries JSON (and so is embedded as an object on the wire).
    public static func isJSON(_ mimeType: String) -> Bool {
        mimeType == "application/json" || mimeType.hasSuffix("+json")
    }
}
