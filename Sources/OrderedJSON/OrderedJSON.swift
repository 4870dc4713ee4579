import PythonText

/// A JSON value whose objects keep their members in order (a schema's properties come out in the
/// order it lists them), read with the line and column of any syntax error.
public enum OrderedJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number with the text it was written as.
    case number(Double, String)
    case string(String)
    case array([OrderedJSON])
    case object([(key: String, value: OrderedJSON)])

    public static func == (left: OrderedJSON, right: OrderedJSON) -> Bool {
        switch (left, right) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a, _), .number(let b, _)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member `key` of an object.
    public subscript(key: String) -> OrderedJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value as compact JSON text (numbers as written).
    public var text: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(_, let written): return written
        case .string(let value): return PythonText.json(value, ensureASCII: false)
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { PythonText.json($0.key, ensureASCII: false) + ":" + $0.value.text }.joined(separator: ",") + "}"
        }
    }

    /// The first number, in document order, too large for a double (`1e309`), as a path
    /// (`temperature`, `input[2].scale`) and as written; nil when every number is finite.
    public func firstNonFiniteNumber() -> (path: String, text: String)? {
        // Values still to visit, last first, each with its path.
        var pending: [(value: OrderedJSON, path: String)] = [(self, "")]
        while let (value, path) = pending.popLast() {
            switch value {
            case .number(let number, let written) where !number.isFinite:
                return (path, written)
            case .array(let items):
                pending += items.indices.reversed().map { (items[$0], "\(path)[\($0)]") }
            case .object(let members):
                pending += members.reversed().map { ($0.value, path.isEmpty ? $0.key : "\(path).\($0.key)") }
            default:
                continue
            }
        }
        return nil
    }

    /// Parses `text`.
    ///
    /// - Throws: `OrderedJSON.SyntaxError` with the line and column of the first problem.
    public init(parsing text: String) throws(SyntaxError) {
        var reader = Reader(bytes: Array(text.utf8))
        reader.skipSpace()
        self = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.position == reader.bytes.count else { throw reader.error("unexpected text after the JSON value") }
    }

    /// Why text is not JSON, and where: a 1-based line and column (in characters).
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let column: Int
        public let reason: String

        public var description: String { "line \(line), column \(column): \(reason)" }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        func error(_ reason: String) -> SyntaxError {
            let place = TextPosition(offset: position, in: bytes)
            return SyntaxError(line: place.line, column: place.column, reason: reason)
        }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func expect(_ word: String, _ value: OrderedJSON) throws(SyntaxError) -> OrderedJSON {
            guard bytes[position...].starts(with: word.utf8) else { throw error("expected a JSON value") }
            position += word.utf8.count
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> OrderedJSON {
            guard depth < 512 else { throw error("nested too deeply") }
            guard position < bytes.count else { throw error("expected a JSON value, found the end of the text") }
            switch bytes[position] {
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                position += 1
                skipSpace()
                var items: [OrderedJSON] = []
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(items)
                }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard position < bytes.count else { throw error("array is not closed with ]") }
                    if bytes[position] == UInt8(ascii: "]") { break }
                    guard bytes[position] == UInt8(ascii: ",") else { throw error("expected , or ] in the array") }
                    position += 1
                }
                position += 1
                return .array(items)
            case UInt8(ascii: "{"):
                position += 1
                skipSpace()
                var members: [(key: String, value: OrderedJSON)] = []
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                    let key = try string()
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected : after the member name \"\(key)\"") }
                    position += 1
                    skipSpace()
                    let member = try value(depth: depth + 1)
                    if let index = members.firstIndex(where: { $0.key == key }) { members[index].value = member } else { members.append((key, member)) }
                    skipSpace()
                    guard position < bytes.count else { throw error("object is not closed with }") }
                    if bytes[position] == UInt8(ascii: "}") { break }
                    guard bytes[position] == UInt8(ascii: ",") else { throw error("expected , or } in the object") }
                    position += 1
                }
                position += 1
                return .object(members)
            default:
                return try number()
            }
        }

        mutating func number() throws(SyntaxError) -> OrderedJSON {
            let start = position
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
            func digits() -> Int {
                let from = position
                while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
                return position - from
            }
            let integral = position
            guard digits() > 0 else { position = start; throw error("expected a JSON value") }
            if bytes[integral] == UInt8(ascii: "0"), position - integral > 1 { position = integral; throw error("a number cannot start with 0") }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { throw error("expected digits after the decimal point") }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
                guard digits() > 0 else { throw error("expected digits in the exponent") }
            }
            let written = String(decoding: bytes[start..<position], as: UTF8.self)
            guard let value = Double(written) else { throw error("number \(written) is out of range") }
            return .number(value, written)
        }

        mutating func string() throws(SyntaxError) -> String {
            position += 1
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll()
            }
            while true {
                guard position < bytes.count else { throw error("string is not closed with \"") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") { break }
                guard byte >= 0x20 else { throw error("control character in a string; write it as an escape") }
                guard byte == UInt8(ascii: "\\") else {
                    run.append(byte)
                    position += 1
                    continue
                }
                flush()
                guard position + 1 < bytes.count else { throw error("string is not closed with \"") }
                let escaped = bytes[position + 1]
                position += 2
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(UnicodeScalar(escaped))
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), bytes[position...].starts(with: "\\u".utf8) {
                        position += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) { code = 0x10000 + (code - 0xD800) << 10 + (low - 0xDC00) }
                    }
                    scalars.append(UnicodeScalar(code) ?? "\u{FFFD}")
                default:
                    position -= 2
                    throw error("unknown escape \\\(String(decoding: [escaped], as: UTF8.self)) in a string")
                }
            }
            flush()
            position += 1
            return String(scalars)
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard position + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else {
                throw error("\\u needs 4 hexadecimal digits")
            }
            position += 4
            return code
        }
    }
}
