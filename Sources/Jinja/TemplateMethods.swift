/// The Python methods templates call on strings, dictionaries and lists, as jinja2's immutable
/// sandbox allows them: reading methods work, modifying ones raise `SecurityError`.
enum TemplateMethods {
    private static let stringMethods: Set<String> = [
        "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith", "replace", "upper", "lower",
        "title", "capitalize", "format", "join", "find", "rfind", "index", "count", "isdigit", "isalpha", "isalnum",
        "isspace", "isupper", "islower", "removeprefix", "removesuffix", "partition", "rpartition", "zfill",
    ]
    private static let dictionaryMethods: Set<String> = ["get", "items", "keys", "values", "pop", "update", "setdefault", "clear", "copy", "cycle"]
    private static let listMethods: Set<String> = ["index", "count", "append", "pop", "extend", "insert", "remove", "sort", "reverse", "clear", "copy"]
    private static let modifying: Set<String> = ["pop", "update", "setdefault", "clear", "append", "extend", "insert", "remove", "sort", "reverse"]

    /// Whether `value` has a method called `name`.
    static func has(_ name: String, on value: TemplateValue) -> Bool {
        switch value {
        case .string: stringMethods.contains(name)
        case .dictionary: dictionaryMethods.contains(name)
        case .list: listMethods.contains(name)
        default: false
        }
    }

    /// Calls method `name` of `receiver`.
    static func call(_ name: String, on receiver: TemplateValue, _ arguments: [TemplateValue], _ keywords: [String: TemplateValue],
                     renderer: inout Renderer, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        func argument(_ index: Int, _ keyword: String) -> TemplateValue? {
            keywords[keyword] ?? (index < arguments.count ? arguments[index] : nil)
        }
        if modifying.contains(name) {
            throw TemplateError(kind: "SecurityError", message: "access to attribute '\(name)' of '\(receiver.typeName)' object is unsafe.",
                                line: position.line, column: position.column)
        }
        switch receiver {
        case .string(let text):
            return try stringMethod(name, text, argument, arguments, keywords, renderer: &renderer, at: position)
        case .dictionary(let dictionary):
            switch name {
            case "get": return argument(0, "key").flatMap { dictionary[$0] } ?? argument(1, "default") ?? .none
            case "items": return .list(dictionary.pairs.map { .list([$0.key, $0.value]) })
            case "keys": return .list(dictionary.keys)
            case "values": return .list(dictionary.pairs.map(\.value))
            case "copy": return receiver
            case "cycle":
                guard case .int(let index)? = dictionary["index0"], !arguments.isEmpty else { return .none }
                return arguments[index % arguments.count]
            default: break
            }
        case .list(let items):
            switch name {
            case "index":
                let needle = argument(0, "value") ?? .none
                guard let index = items.firstIndex(where: { $0.equals(needle) }) else {
                    throw TemplateError(kind: "ValueError", message: "\(needle.repr) is not in list", line: position.line, column: position.column)
                }
                return .int(index)
            case "count": return .int(items.filter { $0.equals(argument(0, "value") ?? .none) }.count)
            case "copy": return receiver
            default: break
            }
        default:
            break
        }
        throw Renderer.typeError("'\(receiver.typeName)' object has no method '\(name)'", at: position)
    }

    private static func stringMethod(_ name: String, _ text: String, _ argument: (Int, String) -> TemplateValue?, _ arguments: [TemplateValue],
                                     _ keywords: [String: TemplateValue], renderer: inout Renderer, at position: SourcePosition) throws(TemplateError) -> TemplateValue {
        func characters(_ index: Int) -> Set<Unicode.Scalar>? {
            guard let value = argument(index, "chars"), value.isString else { return nil }
            return Set(value.text.unicodeScalars)
        }
        func prefixes(_ value: TemplateValue?) -> [String] {
            switch value {
            case .list(let items)?: items.map(\.text)
            case let value?: [value.text]
            case nil: []
            }
        }
        let scalars = Array(text.unicodeScalars)
        switch name {
        case "strip": return .string(strip(text, characters(0), leading: true, trailing: true))
        case "lstrip": return .string(strip(text, characters(0), leading: true, trailing: false))
        case "rstrip": return .string(strip(text, characters(0), leading: false, trailing: true))
        case "split", "rsplit":
            let limit: Int = if case .int(let number)? = argument(1, "maxsplit") { number } else { -1 }
            let separator = argument(0, "sep").flatMap { $0.isString ? $0.text : nil }
            return .list(split(text, separator: separator, limit: limit, fromRight: name == "rsplit").map { .string($0) })
        case "splitlines":
            return .list(text.split(separator: "\n", omittingEmptySubsequences: false).map { .string(String($0)) }.dropLast(text.hasSuffix("\n") ? 1 : 0))
        case "startswith": return .bool(prefixes(argument(0, "prefix")).contains { scalars.starts(with: Array($0.unicodeScalars)) })
        case "endswith": return .bool(prefixes(argument(0, "suffix")).contains { scalars.reversed().starts(with: Array($0.unicodeScalars).reversed()) })
        case "replace":
            let count: Int? = if case .int(let number)? = argument(2, "count") { number } else { nil }
            return .string(replace(text, argument(0, "old")?.text ?? "", argument(1, "new")?.text ?? "", count: count))
        case "upper": return .string(text.uppercased())
        case "lower": return .string(text.lowercased())
        case "title": return .string(title(text))
        case "capitalize": return .string(capitalize(text))
        case "join": return .string(try renderer.iterate(argument(0, "iterable") ?? .list([]), at: position).map(\.text).joined(separator: text))
        case "find", "index", "rfind":
            let needle = Array((argument(0, "sub")?.text ?? "").unicodeScalars)
            var found = scalars.firstRange(of: needle)
            if name == "rfind" {
                var last: Int?
                var start = 0
                while let match = scalars.firstRange(of: needle, from: start), match <= scalars.count { last = match; start = match + 1; if needle.isEmpty && start > scalars.count { break } }
                found = last
            }
            if name == "index", found == nil {
                throw TemplateError(kind: "ValueError", message: "substring not found", line: position.line, column: position.column)
            }
            return .int(found ?? -1)
        case "count":
            let needle = Array((argument(0, "sub")?.text ?? "").unicodeScalars)
            guard !needle.isEmpty else { return .int(scalars.count + 1) }
            var count = 0, start = 0
            while let match = scalars.firstRange(of: needle, from: start) { count += 1; start = match + needle.count }
            return .int(count)
        case "isdigit": return .bool(!scalars.isEmpty && scalars.allSatisfy { $0.properties.numericType == .decimal || $0.properties.numericType == .digit })
        case "isalpha": return .bool(!scalars.isEmpty && scalars.allSatisfy(\.properties.isAlphabetic))
        case "isalnum": return .bool(!scalars.isEmpty && scalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil })
        case "isspace": return .bool(!scalars.isEmpty && scalars.allSatisfy(\.properties.isWhitespace))
        case "isupper": return .bool(text.uppercased() == text && text.lowercased() != text)
        case "islower": return .bool(text.lowercased() == text && text.uppercased() != text)
        case "removeprefix":
            let prefix = argument(0, "prefix")?.text ?? ""
            return .string(text.hasPrefix(prefix) ? String(text.unicodeScalars.dropFirst(prefix.unicodeScalars.count)) : text)
        case "removesuffix":
            let suffix = argument(0, "suffix")?.text ?? ""
            return .string(scalars.reversed().starts(with: suffix.unicodeScalars.reversed()) ? String(String.UnicodeScalarView(scalars.dropLast(suffix.unicodeScalars.count))) : text)
        case "partition", "rpartition":
            let separator = Array((argument(0, "sep")?.text ?? "").unicodeScalars)
            let parts = split(text, separator: String(String.UnicodeScalarView(separator)), limit: 1, fromRight: name == "rpartition")
            if parts.count == 2 { return .list([.string(parts[0]), .string(String(String.UnicodeScalarView(separator))), .string(parts[1])]) }
            return name == "partition" ? .list([.string(text), "", ""]) : .list(["", "", .string(text)])
        case "zfill":
            let width: Int = if case .int(let number)? = argument(0, "width") { number } else { 0 }
            return .string(String(repeating: "0", count: max(0, width - scalars.count)) + text)
        case "format":
            return .string(try format(text, arguments, keywords, at: position))
        default:
            throw Renderer.typeError("'str' object has no method '\(name)'", at: position)
        }
    }

    /// Python's `str.strip` family (whitespace, or the given characters).
    static func strip(_ text: String, _ characters: Set<Unicode.Scalar>?, leading: Bool, trailing: Bool) -> String {
        var scalars = Substring.UnicodeScalarView(text.unicodeScalars)
        let strip: (Unicode.Scalar) -> Bool = { characters?.contains($0) ?? $0.properties.isWhitespace }
        if leading { while let first = scalars.first, strip(first) { scalars.removeFirst() } }
        if trailing { while let last = scalars.last, strip(last) { scalars.removeLast() } }
        return String(scalars)
    }

    /// Python's `str.split` / `str.rsplit`.
    static func split(_ text: String, separator: String?, limit: Int, fromRight: Bool) -> [String] {
        let scalars = Array(text.unicodeScalars)
        func string(_ slice: ArraySlice<Unicode.Scalar>) -> String { String(String.UnicodeScalarView(slice)) }
        guard let separator, !separator.isEmpty else {
            // Runs of whitespace; no empty strings.
            var words: [ArraySlice<Unicode.Scalar>] = []
            var index = 0
            while index < scalars.count {
                while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
                guard index < scalars.count else { break }
                if limit >= 0, words.count == limit, !fromRight {
                    var end = scalars.count
                    while end > index, scalars[end - 1].properties.isWhitespace { end -= 1 }
                    words.append(scalars[index..<end])
                    break
                }
                let start = index
                while index < scalars.count, !scalars[index].properties.isWhitespace { index += 1 }
                words.append(scalars[start..<index])
            }
            return words.map(string)
        }
        let needle = Array(separator.unicodeScalars)
        var parts: [String] = []
        if fromRight {
            var end = scalars.count
            var index = scalars.count - needle.count
            while index >= 0, limit < 0 || parts.count < limit {
                if scalars[index..<(index + needle.count)].elementsEqual(needle) {
                    parts.insert(string(scalars[(index + needle.count)..<end]), at: 0)
                    end = index
                    index -= needle.count
                } else {
                    index -= 1
                }
            }
            parts.insert(string(scalars[0..<end]), at: 0)
            return parts
        }
        var start = 0
        while limit < 0 || parts.count < limit, let match = scalars.firstRange(of: needle, from: start) {
            parts.append(string(scalars[start..<match]))
            start = match + needle.count
        }
        parts.append(string(scalars[start...]))
        return parts
    }

    /// Python's `str.replace`.
    static func replace(_ text: String, _ old: String, _ new: String, count: Int?) -> String {
        let scalars = Array(text.unicodeScalars), needle = Array(old.unicodeScalars)
        var result = String.UnicodeScalarView()
        var start = 0, done = 0
        if needle.isEmpty {
            for scalar in scalars {
                if count.map({ done < $0 }) ?? true { result.append(contentsOf: new.unicodeScalars); done += 1 }
                result.append(scalar)
            }
            if count.map({ done < $0 }) ?? true { result.append(contentsOf: new.unicodeScalars) }
            return String(result)
        }
        while count.map({ done < $0 }) ?? true, let match = scalars.firstRange(of: needle, from: start) {
            result.append(contentsOf: scalars[start..<match])
            result.append(contentsOf: new.unicodeScalars)
            start = match + needle.count
            done += 1
        }
        result.append(contentsOf: scalars[start...])
        return String(result)
    }

    static func capitalize(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst().lowercased()
    }

    static func title(_ text: String) -> String {
        var result = ""
        var previousIsLetter = false
        for character in text {
            result += previousIsLetter ? character.lowercased() : character.uppercased()
            previousIsLetter = character.isLetter
        }
        return result
    }

    /// Python's `str.format` with `{}`, `{0}`, `{name}`, `{name.attr}` and `{{`/`}}`.
    private static func format(_ text: String, _ arguments: [TemplateValue], _ keywords: [String: TemplateValue], at position: SourcePosition) throws(TemplateError) -> String {
        var result = ""
        var automatic = 0
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if character == "{", characters.first == "{" {
                characters.removeFirst()
                result += "{"
            } else if character == "}", characters.first == "}" {
                characters.removeFirst()
                result += "}"
            } else if character == "{" {
                var field = ""
                while let next = characters.popFirst(), next != "}" { field.append(next) }
                let name = String(field.split(separator: ":", maxSplits: 1).first ?? "")
                let value: TemplateValue?
                if name.isEmpty {
                    value = automatic < arguments.count ? arguments[automatic] : nil
                    automatic += 1
                } else if let index = Int(name) {
                    value = index < arguments.count ? arguments[index] : nil
                } else {
                    value = keywords[name]
                }
                guard let value else {
                    throw TemplateError(kind: "IndexError", message: "Replacement index \(automatic - 1) out of range for positional args tuple",
                                        line: position.line, column: position.column)
                }
                result += value.text
            } else {
                result.append(character)
            }
        }
        return result
    }
}
