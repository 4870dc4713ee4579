import OrderedJSON
import PythonText

/// A value in Gemma 4's tool-call syntax — `{city:<|"|>Paris<|"|>,days:3,tags:[<|"|>a<|"|>]}`:
/// strings between `<|"|>` marks, keys bare up to their colon, numbers, `true`, `false`, `null`,
/// lists and nested objects — read from a place in a text and written as compact JSON, as
/// llama.cpp's Gemma 4 parser converts it (members in the order written, numbers as written,
/// white space outside strings dropped). A value cut off by the end of the text is written as far
/// as it goes, unclosed, as llama.cpp's lenient parse does. The scan is a loop over a stack of
/// open containers, so a deeply nested value costs no call stack.
struct GemmaValueScan {
    /// The JSON text (nil when the text is not such a value).
    private(set) var json: String? = ""
    /// Where the text after the value begins; nil when the text ends first.
    private(set) var end: Int?

    /// Gemma 4's string mark.
    static let quote = Array("<|\"|>".utf8)

    /// Scans the object starting at `start` in `bytes`.
    init(_ bytes: [UInt8], from start: Int) {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else {
            json = nil
            return
        }
        var text = ""
        // The open containers, innermost last: `{` or `[`.
        var open: [UInt8] = []
        var expectingKey = false
        var position = start
        while position < bytes.count {
            let byte = bytes[position]
            if ToolCallSyntax.isSpace(byte) {
                position += 1
                continue
            }
            if expectingKey, byte != UInt8(ascii: "}") {
                // A bare key, up to its colon.
                var keyEnd = position
                while keyEnd < bytes.count, bytes[keyEnd] != UInt8(ascii: ":"), bytes[keyEnd] != UInt8(ascii: "}") { keyEnd += 1 }
                let key = String(decoding: bytes[position..<keyEnd], as: UTF8.self)
                guard keyEnd < bytes.count else {
                    json = text + "\"" + String(PythonText.json(key, ensureASCII: false).dropFirst().dropLast())
                    return
                }
                guard bytes[keyEnd] == UInt8(ascii: ":") else {
                    json = nil
                    return
                }
                text += PythonText.json(key, ensureASCII: false) + ":"
                expectingKey = false
                position = keyEnd + 1
                continue
            }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                open.append(byte)
                text.append(Character(Unicode.Scalar(byte)))
                expectingKey = byte == UInt8(ascii: "{")
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard let innermost = open.popLast(), innermost == (byte == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "[")) else {
                    json = nil
                    return
                }
                text.append(Character(Unicode.Scalar(byte)))
                expectingKey = false
                position += 1
                if open.isEmpty {
                    json = text
                    end = position
                    return
                }
            case UInt8(ascii: ","):
                text += ","
                expectingKey = open.last == UInt8(ascii: "{")
                position += 1
            case _ where ToolCallSyntax.hasPrefix(Self.quote, in: bytes, at: position):
                let contentStart = position + Self.quote.count
                guard let close = ToolCallSyntax.firstIndex(of: Self.quote, in: bytes, from: contentStart) else {
                    json = text + "\"" + String(PythonText.json(String(decoding: bytes[contentStart...], as: UTF8.self), ensureASCII: false).dropFirst().dropLast())
                    return
                }
                text += PythonText.json(String(decoding: bytes[contentStart..<close], as: UTF8.self), ensureASCII: false)
                position = close + Self.quote.count
            default:
                // A number or literal, up to a delimiter.
                var literalEnd = position
                while literalEnd < bytes.count, !",}] \n\r\t<".utf8.contains(bytes[literalEnd]) { literalEnd += 1 }
                let literal = String(decoding: bytes[position..<literalEnd], as: UTF8.self)
                guard literalEnd < bytes.count else {
                    json = text + literal
                    return
                }
                switch try? OrderedJSON(parsing: literal) {
                case .number?, .bool?, .null?: text += literal
                default:
                    json = nil
                    return
                }
                position = literalEnd
            }
        }
        json = text
    }
}
