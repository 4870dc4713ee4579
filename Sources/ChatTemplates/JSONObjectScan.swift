import OrderedJSON

/// The members of a JSON object at a place in a text, found without parsing their values: each
/// key with the range of its value's text (as written, so a tool call's arguments keep the
/// model's spacing), where the object ends, and, when the text ends inside a member's value, that
/// member. A value is delimited, not checked: its brackets balance outside strings. The scan is
/// a loop with a depth counter, so a deeply nested value costs no stack.
struct JSONObjectScan {
    /// The members whose value ended, in order.
    private(set) var members: [(key: String, value: Range<Int>)] = []
    /// Where the text after the object begins; nil when the text ends first (or is not an object).
    private(set) var end: Int?
    /// The member whose value began and had not ended when the text did.
    private(set) var openValue: (key: String, start: Int)?

    /// Scans the object starting at `start` in `bytes`.
    init(_ bytes: [UInt8], from start: Int) {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return }
        var position = ToolCallSyntax.skippingSpace(bytes, from: start + 1)
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            end = position + 1
            return
        }
        while position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            guard let keyEnd = Self.endOfString(bytes, from: position),
                  case .string(let key)? = try? OrderedJSON(parsing: String(decoding: bytes[position..<keyEnd], as: UTF8.self)) else { return }
            position = ToolCallSyntax.skippingSpace(bytes, from: keyEnd)
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return }
            position = ToolCallSyntax.skippingSpace(bytes, from: position + 1)
            guard let valueEnd = Self.endOfValue(bytes, from: position) else {
                openValue = (key, position)
                return
            }
            members.append((key, position..<valueEnd))
            position = ToolCallSyntax.skippingSpace(bytes, from: valueEnd)
            guard position < bytes.count else { return }
            if bytes[position] == UInt8(ascii: "}") {
                end = position + 1
                return
            }
            guard bytes[position] == UInt8(ascii: ",") else { return }
            position = ToolCallSyntax.skippingSpace(bytes, from: position + 1)
        }
    }

    /// Where the string starting at `start` (a quote) ends, after its closing quote.
    private static func endOfString(_ bytes: [UInt8], from start: Int) -> Int? {
        var position = start + 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\\"): position += 2
            case UInt8(ascii: "\""): return position + 1
            default: position += 1
            }
        }
        return nil
    }

    /// Where the value starting at `start` ends; nil when the text ends first.
    private static func endOfValue(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return endOfString(bytes, from: start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard let after = endOfString(bytes, from: position) else { return nil }
                    position = after
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return position + 1 }
                default: break
                }
                position += 1
            }
            return nil
        default:
            // A number or literal runs to a delimiter; the text may still continue it.
            var position = start
            while position < bytes.count, !",}] \n\r\t".utf8.contains(bytes[position]) { position += 1 }
            return position < bytes.count ? position : nil
        }
    }
}
