/// The top-level field names of a JSON object, read without their values, so a server can refuse
/// fields it does not know (Codable alone ignores them).
public struct FieldNames: Decodable, Sendable {
    /// The names.
    public let names: Set<String>

    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads the object's keys.
    public init(from decoder: any Decoder) throws {
        names = Set(try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue))
    }
}
