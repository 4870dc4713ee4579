/// Python's text forms of values, which both the Jinja renderer (`repr`, `tojson`) and the
/// notebook writer (nbformat's `json.dumps`) must reproduce character for character.
public enum PythonText {
    /// A float as Python's `repr` writes it: the shortest digits that round-trip, `1.0` for whole
    /// numbers below 10¹⁶ (`-0.0` included), an exponent of at least two digits with its sign (`1e-05`, `1e+16`),
    /// `nan`, `inf`, `-inf`.
    public static func repr(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        if value == value.rounded(), abs(value) < 1e16 { return (value.sign == .minus ? "-" : "") + String(Int(value.magnitude)) + ".0" }
        let text = "\(value)"
        guard let exponentIndex = text.firstIndex(of: "e") else { return text }
        let mantissa = text[..<exponentIndex]
        var exponent = text[text.index(after: exponentIndex)...]
        let sign = exponent.first == "-" ? "-" : "+"
        if exponent.first == "-" || exponent.first == "+" { exponent = exponent.dropFirst() }
        let digits = exponent.count < 2 ? "0" + exponent : String(exponent)
        return (mantissa.hasSuffix(".0") ? String(mantissa.dropLast(2)) : String(mantissa)) + "e" + sign + digits
    }

    /// A string as Python's `repr` writes it: in single quotes, or double ones when it holds a
    /// single quote and no double quote; `\\`, `\n`, `\r`, `\t` and the quote escaped, and
    /// every character Python does not print (`str.isprintable`: controls, format and private-use
    /// characters, separators other than the space, unassigned code points) as `\xhh`, `\uhhhh`
    /// or `\Uhhhhhhhh`.
    public static func repr(_ text: String) -> String {
        let quote: Unicode.Scalar = text.contains("'") && !text.contains("\"") ? "\"" : "'"
        var result = String(quote)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case quote: result += "\\" + String(quote)
            case _ where !isPrintable(scalar):
                result += scalar.value < 0x100 ? hex(scalar.value, "\\x", 2) : scalar.value < 0x10000 ? hex(scalar.value, "\\u", 4) : hex(scalar.value, "\\U", 8)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + String(quote)
    }

    /// Python's `str.isprintable` for one character.
    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == " " { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator, .spaceSeparator: return false
        default: return true
        }
    }

    /// A float as Python's `json.dumps` writes it: as `repr`, with `NaN`, `Infinity` and
    /// `-Infinity` for the values JSON lacks.
    public static func json(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return repr(value)
    }

    /// A string as Python's `json.dumps` writes it: quoted, with `\"`, `\\`, `\n`, `\r`, `\t`,
    /// `\b`, `\f`, other control characters as `\u00XX`, and, with `ensureASCII` (Python's
    /// default), every non-ASCII character as `\uXXXX` (a surrogate pair above the BMP).
    public static func json(_ text: String, ensureASCII: Bool) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case _ where scalar.value < 0x20 || (ensureASCII && scalar.value > 0x7E):
                if scalar.value > 0xFFFF {
                    let offset = scalar.value - 0x10000
                    result += hex(0xD800 + (offset >> 10), "\\u", 4) + hex(0xDC00 + (offset & 0x3FF), "\\u", 4)
                } else {
                    result += hex(scalar.value, "\\u", 4)
                }
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `prefix` and `value` in at least `width` lower-case hex digits.
    private static func hex(_ value: UInt32, _ prefix: String, _ width: Int) -> String {
        let digits = String(value, radix: 16)
        return prefix + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
