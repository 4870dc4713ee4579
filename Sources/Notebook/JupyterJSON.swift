import Foundation
import JupyterProtocol

/// Writes JSON exactly as Jupyter writes notebooks (Python's `json.dumps(indent=1,
/// sort_keys=True, ensure_ascii=False)` plus a final newline), so re-running an unchanged
/// notebook gives a minimal diff.
enum JupyterJSON {
    static func format(_ value: JSONValue) -> String {
        var output = ""
        write(value, indent: 0, into: &output)
        return output + "\n"
    }

    private static func write(_ value: JSONValue, indent: Int, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let number): output += String(number)
        case .double(let number): output += pythonRepresentation(number)
        case .string(let text): output += quoted(text)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += String(repeating: " ", count: indent + 1)
                write(element, indent: indent + 1, into: &output)
                output += index < elements.count - 1 ? ",\n" : "\n"
            }
            output += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            let keys = members.keys.sorted { Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) }
            for (index, key) in keys.enumerated() {
                output += String(repeating: " ", count: indent + 1) + quoted(key) + ": "
                write(members[key] ?? .null, indent: indent + 1, into: &output)
                output += index < keys.count - 1 ? ",\n" : "\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        }
    }

    /// A JSON string literal escaped as Python's json module escapes it with ensure_ascii=False.
    static func quoted(_ text: String) -> String {
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
            case _ where scalar.value < 0x20:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A Double as Python's `repr` writes it (`1.0`, `0.1`, `1e-05`).
    static func pythonRepresentation(_ number: Double) -> String {
        guard number.isFinite else { return number.isNaN ? "NaN" : (number > 0 ? "Infinity" : "-Infinity") }
        var text = "\(number)"
        if let exponentIndex = text.firstIndex(of: "e") {
            let mantissa = text[..<exponentIndex]
            var exponent = text[text.index(after: exponentIndex)...]
            let sign = exponent.first == "-" ? "-" : "+"
            if exponent.first == "-" || exponent.first == "+" { exponent = exponent.dropFirst() }
            let digits = exponent.count < 2 ? "0" + exponent : String(exponent)
            text = "\(mantissa.hasSuffix(".0") ? String(mantissa.dropLast(2)) : String(mantissa))e\(sign)\(digits)"
        }
        return text
    }
}
