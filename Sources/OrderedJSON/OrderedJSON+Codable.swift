/// JSON values read and written through `Codable` (a message's free-form part, such as a Debug
/// Adapter Protocol request's `arguments`), and written as Swift literals.
///
/// Decoding goes through a keyed container, which does not keep the order of an object's
/// members: they come out sorted by key. Numbers keep their text when it is an integer's.
extension OrderedJSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number, String(number))
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([OrderedJSON].self) {
            self = .array(items)
        } else {
            let members = try container.decode([String: OrderedJSON].self)
            self = .object(members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for member in members { try container.encode(member.value, forKey: MemberKey(member.key)) }
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .number(let number, let written):
            var container = encoder.singleValueContainer()
            if let integer = Int(written) { try container.encode(integer) } else { try container.encode(number) }
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }

    /// An object member's name as a coding key.
    private struct MemberKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// An integer, written as its digits.
    public static func integer(_ value: Int) -> OrderedJSON {
        .number(Double(value), String(value))
    }

    /// The integer the value is, if it is one.
    public var integerValue: Int? {
        guard case .number(let number, _) = self, let integer = Int(exactly: number) else { return nil }
        return integer
    }

    /// The string the value is, if it is one.
    public var stringValue: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }
}

extension OrderedJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: OrderedJSON...) { self = .array(elements) }
    /// An object with the members in the order written.
    public init(dictionaryLiteral elements: (String, OrderedJSON)...) { self = .object(elements.map { (key: $0.0, value: $0.1) }) }
}
