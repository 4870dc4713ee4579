import JupyterProtocol
import PythonText

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
        case .double(let number): output += PythonText.json(number)
        case .string(let text): output += PythonText.json(text, ensureASCII: false)
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
                output += String(repeating: " ", count: indent + 1) + PythonText.json(key, ensureASCII: false) + ": "
                write(members[key] ?? .null, indent: indent + 1, into: &output)
                output += index < keys.count - 1 ? ",\n" : "\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        }
    }
}
