import PythonText

/// JSON as Python's `json.dumps` writes it, which is what transformers' `tojson` filter calls:
/// `", "` and `": "` separators (`","` with an indent), non-ASCII kept unless `ensure_ascii`,
/// floats in Python's shortest form.
enum JSONWriter {
    static func write(_ value: TemplateValue, indent: Int?, sortKeys: Bool, ensureASCII: Bool, at position: SourcePosition) throws(TemplateError) -> String {
        var output = ""
        try write(value, indent: indent, level: 0, sortKeys: sortKeys, ensureASCII: ensureASCII, at: position, into: &output)
        return output
    }

    private static func write(_ value: TemplateValue, indent: Int?, level: Int, sortKeys: Bool, ensureASCII: Bool,
                              at position: SourcePosition, into output: inout String) throws(TemplateError) {
        let itemSeparator = indent == nil ? ", " : ","
        func newline(_ depth: Int) -> String {
            guard let indent else { return "" }
            return "\n" + String(repeating: " ", count: indent * depth)
        }
        switch value {
        case .none: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .int(let number): output += String(number)
        case .float(let number):
            output += PythonText.json(number)
        case .string(let text): output += PythonText.json(text, ensureASCII: ensureASCII)
        case .list(let items):
            guard !items.isEmpty else { output += "[]"; return }
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += itemSeparator }
                output += newline(level + 1)
                try write(item, indent: indent, level: level + 1, sortKeys: sortKeys, ensureASCII: ensureASCII, at: position, into: &output)
            }
            output += newline(level) + "]"
        case .dictionary(let dictionary):
            guard dictionary.count > 0 else { output += "{}"; return }
            output += "{"
            // Sorted by the keys themselves (numbers as numbers), as Python sorts the items.
            let keys = sortKeys ? try Filters.sorted(dictionary.keys, at: position) { $0 } : dictionary.keys
            for (index, key) in keys.enumerated() {
                if index > 0 { output += itemSeparator }
                output += newline(level + 1) + PythonText.json(try keyText(key, at: position), ensureASCII: ensureASCII) + ": "
                let value = dictionary[key] ?? .none
                try write(value, indent: indent, level: level + 1, sortKeys: sortKeys, ensureASCII: ensureASCII, at: position, into: &output)
            }
            output += newline(level) + "}"
        case .undefined, .namespace, .callable:
            throw Renderer.typeError("Object of type \(value.typeName) is not JSON serializable", at: position)
        }
    }

    /// A key as `json.dumps` writes it: strings as they are, numbers, booleans and None as their
    /// JSON text.
    private static func keyText(_ key: TemplateValue, at position: SourcePosition) throws(TemplateError) -> String {
        switch key {
        case .string(let text): return text
        case .none, .bool, .int, .float:
            var text = ""
            try write(key, indent: nil, level: 0, sortKeys: false, ensureASCII: false, at: position, into: &text)
            return text
        default: throw Renderer.typeError("keys must be str, int, float, bool or None, not \(key.typeName)", at: position)
        }
    }

}
