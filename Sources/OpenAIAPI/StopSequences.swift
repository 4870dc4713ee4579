/// The `stop` field of a request: one string or a list of them (the API accepts both).
public struct StopSequences: Codable, Sendable, Equatable {
    /// The strings that end a generation.
    public var strings: [String]

    /// Stop sequences.
    public init(_ strings: [String]) {
        self.strings = strings
    }

    /// Reads a string or an array of strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            strings = [one]
        } else {
            strings = try container.decode([String].self)
        }
    }

    /// Writes an array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(strings)
    }
}
