/// jinja2's filters and the `tojson` that transformers adds, one table.
enum Filters {
    private typealias Filter = @Sendable (_ value: TemplateValue, _ arguments: FilterArguments, _ renderer: inout Renderer) throws(TemplateError) -> TemplateValue

    /// A filter's arguments by position or keyword, as Python binds them.
    struct FilterArguments {
        let positional: [TemplateValue]
        let keywords: [String: TemplateValue]
        let position: SourcePosition

        /// Argument `index` (after the filtered value), or keyword `name`.
        func argument(_ index: Int, _ name: String) -> TemplateValue? {
            keywords[name] ?? (index < positional.count ? positional[index] : nil)
        }

        func integer(_ index: Int, _ name: String, default value: Int) -> Int {
            if case .int(let number)? = argument(index, name) { return number }
            return value
        }

        func flag(_ index: Int, _ name: String, default value: Bool) -> Bool {
            argument(index, name)?.isTruthy ?? value
        }
    }

    private static let table: [String: Filter] = [
        "tojson": { value, arguments, _ throws(TemplateError) in
            let indent: Int? = if case .int(let number)? = arguments.argument(0, "indent") { number } else { nil }
            return .string(try JSONWriter.write(value, indent: indent, sortKeys: arguments.flag(99, "sort_keys", default: false),
                                                ensureASCII: arguments.flag(99, "ensure_ascii", default: false), at: arguments.position))
        },
        "length": { value, arguments, renderer throws(TemplateError) in
            switch value {
            case .string(let text): return .int(text.unicodeScalars.count)
            case .dictionary(let dictionary): return .int(dictionary.count)
            case .namespace(let slot): return .int(renderer.namespaces[slot].count)
            default: return .int(try renderer.iterate(value, at: arguments.position).count)
            }
        },
        "default": { value, arguments, _ in
            let fallback = arguments.argument(0, "default_value") ?? .string("")
            if value.isUndefined || (arguments.flag(1, "boolean", default: false) && !value.isTruthy) { return fallback }
            return value
        },
        "trim": { value, arguments, _ in
            let characters: Set<Unicode.Scalar>? = arguments.argument(0, "chars").map { Set($0.text.unicodeScalars) }
            return .string(TemplateMethods.strip(value.text, characters, leading: true, trailing: true))
        },
        "string": { value, _, _ in .string(value.text) },
        "safe": { value, _, _ in value },
        "upper": { value, _, _ in .string(value.text.uppercased()) },
        "lower": { value, _, _ in .string(value.text.lowercased()) },
        "capitalize": { value, _, _ in .string(TemplateMethods.capitalize(value.text)) },
        "title": { value, _, _ in .string(TemplateMethods.title(value.text)) },
        "join": { value, arguments, renderer throws(TemplateError) in
            var items = try renderer.iterate(value, at: arguments.position)
            if let attribute = arguments.argument(1, "attribute") {
                var mapped: [TemplateValue] = []
                for item in items { mapped.append(try renderer.item(attribute, of: item, at: arguments.position)) }
                items = mapped
            }
            return .string(items.map(\.text).joined(separator: arguments.argument(0, "d")?.text ?? ""))
        },
        "list": { value, arguments, renderer throws(TemplateError) in .list(try renderer.iterate(value, at: arguments.position)) },
        "first": { value, arguments, renderer throws(TemplateError) in
            try renderer.iterate(value, at: arguments.position).first ?? .undefined("No first item, sequence was empty.")
        },
        "last": { value, arguments, renderer throws(TemplateError) in
            try renderer.iterate(value, at: arguments.position).last ?? .undefined("No last item, sequence was empty.")
        },
        "reverse": { value, arguments, renderer throws(TemplateError) in
            if case .string(let text) = value { return .string(String(String.UnicodeScalarView(text.unicodeScalars.reversed()))) }
            return .list(try renderer.iterate(value, at: arguments.position).reversed())
        },
        "items": { value, arguments, _ throws(TemplateError) in
            guard case .dictionary(let dictionary) = value else {
                if value.isUndefined { return .list([]) }
                throw Renderer.typeError("can only get item pairs from a mapping.", at: arguments.position)
            }
            return .list(dictionary.pairs.map { .list([$0.key, $0.value]) })
        },
        "dictsort": { value, arguments, _ throws(TemplateError) in
            guard case .dictionary(let dictionary) = value else { throw Renderer.typeError("can only dictsort a mapping", at: arguments.position) }
            let byValue = arguments.argument(1, "by")?.text == "value"
            let caseSensitive = arguments.flag(0, "case_sensitive", default: false)
            let pairs = try sorted(dictionary.pairs.map { TemplateValue.list([$0.key, $0.value]) }, at: arguments.position) { pair in
                guard case .list(let parts) = pair else { return pair }
                let key = parts[byValue ? 1 : 0]
                if !caseSensitive, case .string(let text) = key { return .string(text.lowercased()) }
                return key
            }
            return .list(arguments.flag(2, "reverse", default: false) ? pairs.reversed() : pairs)
        },
        "sort": { value, arguments, renderer throws(TemplateError) in
            let items = try renderer.iterate(value, at: arguments.position)
            let attribute = arguments.argument(2, "attribute")
            let caseSensitive = arguments.flag(1, "case_sensitive", default: false)
            let copy = renderer
            var result = try sorted(items, at: arguments.position) { item throws(TemplateError) in
                var key = try attribute.map { a throws(TemplateError) in try copy.item(a, of: item, at: arguments.position) } ?? item
                if !caseSensitive, case .string(let text) = key { key = .string(text.lowercased()) }
                return key
            }
            if arguments.flag(0, "reverse", default: false) { result.reverse() }
            return .list(result)
        },
        "unique": { value, arguments, renderer throws(TemplateError) in
            var seen: [TemplateValue] = []
            for item in try renderer.iterate(value, at: arguments.position) where !seen.contains(where: { $0.equals(item) }) { seen.append(item) }
            return .list(seen)
        },
        "selectattr": { value, arguments, renderer throws(TemplateError) in
            try select(value, arguments, &renderer, byAttribute: true, keep: true)
        },
        "rejectattr": { value, arguments, renderer throws(TemplateError) in
            try select(value, arguments, &renderer, byAttribute: true, keep: false)
        },
        "select": { value, arguments, renderer throws(TemplateError) in
            try select(value, arguments, &renderer, byAttribute: false, keep: true)
        },
        "reject": { value, arguments, renderer throws(TemplateError) in
            try select(value, arguments, &renderer, byAttribute: false, keep: false)
        },
        "map": { value, arguments, renderer throws(TemplateError) in
            let items = value.isTruthy ? try renderer.iterate(value, at: arguments.position) : []
            var result: [TemplateValue] = []
            if let attribute = arguments.keywords["attribute"] {
                for item in items {
                    var mapped = try renderer.item(attribute, of: item, at: arguments.position)
                    if mapped.isUndefined, let fallback = arguments.keywords["default"] { mapped = fallback }
                    result.append(mapped)
                }
            } else if let name = arguments.positional.first?.text {
                let rest = FilterArguments(positional: Array(arguments.positional.dropFirst()), keywords: arguments.keywords, position: arguments.position)
                for item in items { result.append(try apply(name, to: item, rest, renderer: &renderer)) }
            }
            return .list(result)
        },
        "replace": { value, arguments, _ in
            let old = arguments.argument(0, "old")?.text ?? "", new = arguments.argument(1, "new")?.text ?? ""
            let count: Int? = if case .int(let number)? = arguments.argument(2, "count") { number } else { nil }
            return .string(TemplateMethods.replace(value.text, old, new, count: count))
        },
        "int": { value, arguments, _ in
            switch value {
            case .int: return value
            case .bool(let flag): return .int(flag ? 1 : 0)
            case .float(let number): return .int(Int(number))
            case .string(let text): return .int(Int(text.trimmingWhitespace()) ?? Double(text.trimmingWhitespace()).map { Int($0) } ?? arguments.integer(0, "default", default: 0))
            default: return .int(arguments.integer(0, "default", default: 0))
            }
        },
        "float": { value, _, _ in
            switch value {
            case .float: return value
            case .int(let number): return .float(Double(number))
            case .string(let text): return .float(Double(text.trimmingWhitespace()) ?? 0)
            default: return .float(0)
            }
        },
        "abs": { value, arguments, _ throws(TemplateError) in
            switch value {
            case .int(let number): return .int(abs(number))
            case .float(let number): return .float(abs(number))
            default: throw Renderer.typeError("bad operand type for abs(): '\(value.typeName)'", at: arguments.position)
            }
        },
        "round": { value, arguments, _ in
            let precision = arguments.integer(0, "precision", default: 0)
            var scale = 1.0
            for _ in 0..<max(0, precision) { scale *= 10 }
            let number = value.numeric ?? 0
            let method = arguments.argument(1, "method")?.text ?? "common"
            let scaled = number * scale
            let rounded = method == "ceil" ? scaled.rounded(.up) : method == "floor" ? scaled.rounded(.down) : scaled.rounded(.toNearestOrAwayFromZero)
            return .float(rounded / scale)
        },
        "sum": { value, arguments, renderer throws(TemplateError) in
            var total = arguments.argument(1, "start") ?? .int(0)
            for item in try renderer.iterate(value, at: arguments.position) {
                let addend = try arguments.argument(0, "attribute").map { a throws(TemplateError) in try renderer.item(a, of: item, at: arguments.position) } ?? item
                total = try TemplateOperators.binary("+", total, addend, at: arguments.position)
            }
            return total
        },
        "min": { value, arguments, renderer throws(TemplateError) in
            try sorted(try renderer.iterate(value, at: arguments.position), at: arguments.position) { $0 }.first ?? .undefined("No aggregated item, sequence was empty.")
        },
        "max": { value, arguments, renderer throws(TemplateError) in
            try sorted(try renderer.iterate(value, at: arguments.position), at: arguments.position) { $0 }.last ?? .undefined("No aggregated item, sequence was empty.")
        },
        "indent": { value, arguments, _ in
            let width = arguments.argument(0, "width").map { if case .int(let n) = $0 { String(repeating: " ", count: n) } else { $0.text } } ?? "    "
            let first = arguments.flag(1, "first", default: false), blank = arguments.flag(2, "blank", default: false)
            var lines = value.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for index in lines.indices where (index > 0 || first) && (blank || !lines[index].isEmpty) { lines[index] = width + lines[index] }
            return .string(lines.joined(separator: "\n"))
        },
        "wordcount": { value, _, _ in .int(value.text.split(whereSeparator: { $0.isWhitespace }).count) },
        "center": { value, arguments, _ in
            let width = arguments.integer(0, "width", default: 80)
            let text = value.text
            let padding = max(0, width - text.unicodeScalars.count)
            let left = padding / 2 + (padding % 2 == 1 && width % 2 == 1 ? 1 : 0)
            return .string(String(repeating: " ", count: left) + text + String(repeating: " ", count: padding - left))
        },
        "escape": { value, _, _ in .string(escapeHTML(value.text)) },
        "count": { value, arguments, renderer throws(TemplateError) in
            if case .string(let text) = value { return .int(text.unicodeScalars.count) }
            return .int(try renderer.iterate(value, at: arguments.position).count)
        },
    ]

    private static let aliases = ["d": "default", "e": "escape"]

    /// Applies filter `name`.
    static func apply(_ name: String, to value: TemplateValue, _ positional: [TemplateValue], _ keywords: [String: TemplateValue],
                      renderer: inout Renderer, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        try apply(name, to: value, FilterArguments(positional: positional, keywords: keywords, position: position), renderer: &renderer)
    }

    private static func apply(_ name: String, to value: TemplateValue, _ arguments: FilterArguments, renderer: inout Renderer) throws(TemplateError) -> TemplateValue {
        guard let filter = table[aliases[name] ?? name] else {
            throw TemplateError(kind: "TemplateRuntimeError", message: "No filter named '\(name)'.", line: arguments.position.line, column: arguments.position.column)
        }
        // Undefined fails where Python would call one of the operations jinja2's Undefined refuses.
        if value.isUndefined, ["abs", "int", "float", "round"].contains(name) {
            throw Renderer.undefinedError(value, at: arguments.position)
        }
        return try filter(value, arguments, &renderer)
    }

    /// `selectattr`/`rejectattr`/`select`/`reject`: items whose attribute (or self) passes a test.
    private static func select(_ value: TemplateValue, _ arguments: FilterArguments, _ renderer: inout Renderer, byAttribute: Bool, keep: Bool) throws(TemplateError) -> TemplateValue {
        // jinja2 walks the sequence only when it is truthy, so `none | selectattr(…)` is empty.
        guard value.isTruthy else { return .list([]) }
        var remaining = arguments.positional
        let attribute = byAttribute && !remaining.isEmpty ? remaining.removeFirst() : nil
        let testName = remaining.isEmpty ? nil : remaining.removeFirst().text
        var result: [TemplateValue] = []
        for item in try renderer.iterate(value, at: arguments.position) {
            let subject = try attribute.map { a throws(TemplateError) in try renderer.item(a, of: item, at: arguments.position) } ?? item
            let passes = try testName.map { t throws(TemplateError) in try Tests.apply(t, to: subject, remaining, at: arguments.position) } ?? subject.isTruthy
            if passes == keep { result.append(item) }
        }
        return .list(result)
    }

    /// A stable sort by key with Python's ordering.
    static func sorted(_ items: [TemplateValue], at position: SourcePosition, key: (TemplateValue) throws(TemplateError) -> TemplateValue) throws(TemplateError) -> [TemplateValue] {
        var keyed: [(key: TemplateValue, item: TemplateValue)] = []
        for item in items { keyed.append((try key(item), item)) }
        // Insertion sort keeps equal keys in order and lets comparison errors surface.
        var result: [(key: TemplateValue, item: TemplateValue)] = []
        for entry in keyed {
            var index = result.count
            while index > 0, try TemplateOperators.compare("<", entry.key, result[index - 1].key, at: position) { index -= 1 }
            result.insert(entry, at: index)
        }
        return result.map(\.item)
    }

    private static func escapeHTML(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&#34;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing whitespace (Python's `str.strip()`).
    func trimmingWhitespace() -> String {
        TemplateMethods.strip(self, nil, leading: true, trailing: true)
    }
}
