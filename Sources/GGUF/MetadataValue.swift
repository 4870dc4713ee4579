/// A GGUF metadata value.
public enum MetadataValue: Sendable, Equatable {
    case uint(UInt64)
    case int(Int64)
    case float(Double)
    case bool(Bool)
    case string(String)
    case array([MetadataValue])

    /// The value as an integer, if it is one that fits.
    public var intValue: Int? {
        switch self {
        case .uint(let value): Int(exactly: value)
        case .int(let value): Int(exactly: value)
        default: nil
        }
    }

    /// The value as a floating-point number, if it is numeric.
    public var doubleValue: Double? {
        switch self {
        case .float(let value): value
        case .uint(let value): Double(value)
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The value as a string, if it is one.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements, if the value is an array.
    public var arrayValue: [MetadataValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}

extension MetadataValue {
    /// The value for people: numbers and strings as they are, arrays by their length.
    public var displayText: String {
        switch self {
        case .uint(let value): String(value)
        case .int(let value): String(value)
        case .float(let value): String(value)
        case .bool(let value): String(value)
        case .string(let text): text
        case .array(let elements): "[\(elements.count) values]"
        }
    }
}
