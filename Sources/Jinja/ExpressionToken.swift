/// A token inside a tag: names, literals and operators.
enum ExpressionToken: Equatable, Sendable {
    case name(String)
    case string(String)
    case integer(Int)
    case float(Double)
    /// An operator or punctuation: `+ - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |`.
    case symbol(String)

}

/// A token and where it starts.
struct PositionedToken: Equatable, Sendable {
    let token: ExpressionToken
    let position: SourcePosition
}

/// Reads the tokens of one tag, up to its closing `}}` or `%}` (with an optional `-`/`+`),
/// ignoring closers inside open brackets as jinja2 does.
struct ExpressionTokenizer {
    let source: [Unicode.Scalar]
    var index = 0
    var position = SourcePosition(line: 1, column: 1)
    private(set) var positioned: [PositionedToken] = []

    init(source: [Unicode.Scalar]) {
        self.source = source
    }

    private static let symbols = ["//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">", "=",
                                  "(", ")", "[", "]", "{", "}", ",", ".", ":", "|"]

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < source.count ? source[index + offset] : nil
    }

    private mutating func advance(by count: Int = 1) {
        for _ in 0..<count where index < source.count {
            if source[index] == "\n" {
                position.line += 1
                position.column = 1
            } else {
                position.column += 1
            }
            index += 1
        }
    }

    private func startsWith(_ text: String) -> Bool {
        var offset = 0
        for scalar in text.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    /// The tokens up to the tag's end (`closer` is `}` for `}}`, `%` for `%}`), leaving `index`
    /// after it.
    mutating func tokens(until closer: Unicode.Scalar, tagStart: SourcePosition) throws(TemplateError) -> [PositionedToken] {
        let end = "\(closer)}"
        var depth = 0
        while index < source.count {
            if depth == 0 {
                for sign in ["-", "+", ""] where startsWith(sign + end) {
                    advance(by: sign.unicodeScalars.count + 2)
                    return positioned
                }
            }
            guard let scalar = peek() else { break }
            let start = position
            if scalar.properties.isWhitespace {
                advance()
                continue
            }
            if scalar == "_" || scalar.properties.isAlphabetic {
                var name = String.UnicodeScalarView()
                while let next = peek(), next == "_" || next.properties.isAlphabetic || ("0"..."9").contains(next) {
                    name.append(next)
                    advance()
                }
                positioned.append(PositionedToken(token: .name(String(name)), position: start))
                continue
            }
            if ("0"..."9").contains(scalar) {
                positioned.append(PositionedToken(token: readNumber(), position: start))
                continue
            }
            if scalar == "'" || scalar == "\"" {
                positioned.append(PositionedToken(token: .string(try readString(quote: scalar, start: start)), position: start))
                continue
            }
            guard let symbol = Self.symbols.first(where: { startsWith($0) }) else {
                throw .syntax("unexpected '\(Character(scalar))'", at: start)
            }
            if ["(", "[", "{"].contains(symbol) { depth += 1 }
            if [")", "]", "}"].contains(symbol) { depth -= 1 }
            advance(by: symbol.count)
            positioned.append(PositionedToken(token: .symbol(symbol), position: start))
        }
        throw .syntax("unexpected end of template, expected '\(end)'", at: tagStart)
    }

    private mutating func readNumber() -> ExpressionToken {
        var digits = ""
        var isFloat = false
        while let next = peek() {
            if ("0"..."9").contains(next) || next == "_" {
                if next != "_" { digits.unicodeScalars.append(next) }
            } else if next == ".", !isFloat, let after = peek(1), ("0"..."9").contains(after) {
                isFloat = true
                digits += "."
            } else if next == "e" || next == "E", let after = peek(1), ("0"..."9").contains(after) || after == "-" || after == "+" {
                isFloat = true
                digits += "e"
                advance()
                if let sign = peek(), sign == "-" || sign == "+" { digits.unicodeScalars.append(sign); advance() }
                continue
            } else {
                break
            }
            advance()
        }
        if !isFloat, let value = Int(digits) { return .integer(value) }
        return .float(Double(digits) ?? 0)
    }

    /// A string literal with Python's escapes (`\n`, `\t`, `\\`, `\'`, `\xNN`, `\uNNNN`, …).
    private mutating func readString(quote: Unicode.Scalar, start: SourcePosition) throws(TemplateError) -> String {
        advance()
        var value = String.UnicodeScalarView()
        while let scalar = peek() {
            if scalar == quote {
                advance()
                return String(value)
            }
            if scalar == "\\", let escaped = peek(1) {
                advance(by: 2)
                switch escaped {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "r": value.append("\r")
                case "0": value.append("\0")
                case "a": value.append("\u{07}")
                case "b": value.append("\u{08}")
                case "f": value.append("\u{0C}")
                case "v": value.append("\u{0B}")
                case "\\", "'", "\"": value.append(escaped)
                case "\n": break
                case "x", "u", "U":
                    let width = escaped == "x" ? 2 : escaped == "u" ? 4 : 8
                    var hex = ""
                    for offset in 0..<width { if let digit = peek(offset) { hex.unicodeScalars.append(digit) } }
                    guard hex.count == width, let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else {
                        throw .syntax("invalid \\\(escaped) escape in a string", at: start)
                    }
                    advance(by: width)
                    value.append(decoded)
                default:
                    value.append("\\")
                    value.append(escaped)
                }
                continue
            }
            value.append(scalar)
            advance()
        }
        throw .syntax("unexpected end of string", at: start)
    }
}
