import OrderedJSON
import PythonText

/// A JSON Schema written as a GBNF grammar whose sentences are JSON documents valid against it,
/// covering what llama.cpp's json-schema-to-grammar accepts: `type` (one or several), `properties`
/// with `required` (properties in the schema's order, optional ones in order too) and
/// `additionalProperties` (false unless given, as in llama.cpp: faster grammars, fewer invented
/// keys), `items`/`prefixItems` with `minItems`/`maxItems`, `enum`, `const`, `anyOf`/`oneOf`,
/// `allOf` of one schema, `$ref` into `$defs`/`definitions` (recursive ones too), strings with
/// `minLength`/`maxLength`/`pattern` and the formats date, time, date-time and uuid, and integers
/// and numbers with `minimum`/`maximum` (exclusive too). A keyword that changes what is valid and
/// is not covered is an error naming it and where it is; annotations (title, description, …) are
/// ignored. Values are written as JSON, or as a tool call's arguments in Gemma 4's syntax or Qwen's
/// XML parameters (`Grammar.ValueSyntax`).
struct JSONSchemaGrammar {
    static let source = "JSON schema"

    /// Keywords that describe and never constrain.
    private static let annotations: Set<String> = [
        "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly",
        "$defs", "definitions", "contentMediaType", "contentEncoding", "strict",
    ]

    /// The rules every JSON grammar may use, by name.
    private static let primitives: [String: (body: String, uses: [String])] = [
        "ws": (#"| " " | "\n" [ \t]{0,20}"#, []),
        "boolean": (#""true" | "false""#, []),
        "null": (#""null""#, []),
        "integral-part": (#"[0] | [1-9] [0-9]{0,15}"#, []),
        "integer": (#""-"? integral-part"#, ["integral-part"]),
        "number": (#""-"? integral-part ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,16})?"#, ["integral-part"]),
        "char": (#"[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})"#, []),
        "string": (#""\"" char* "\"""#, ["char"]),
        "value": ("object | array | string | number | boolean | null", ["object", "array", "string", "number", "boolean", "null"]),
        "object": (#""{" ws ( string ws ":" ws value ws ("," ws string ws ":" ws value ws)* )? "}""#, ["ws", "string", "value"]),
        "array": (#""[" ws ( value ws ("," ws value ws)* )? "]""#, ["ws", "value"]),
        "date": (#"[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [1-2] [0-9] | "3" [0-1])"#, []),
        "time": (#"([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{3})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])"#, []),
        "date-time": (#"date "T" time"#, ["date", "time"]),
        "uuid": (#"[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}"#, []),
    ]

    /// The schema being converted (the one `$ref`s point into).
    private var schema: OrderedJSON
    /// The syntax the values are written in.
    private let syntax: Grammar.ValueSyntax
    /// Rules written so far, by name, and their order.
    private var rules: [String: String] = [:]
    private var order: [String] = []
    /// The rule each `$ref` became.
    private var references: [String: String] = [:]

    /// A converter of `schema`, whose values are written in `syntax`.
    init(_ schema: OrderedJSON, syntax: Grammar.ValueSyntax = .json) {
        self.schema = schema
        self.syntax = syntax
    }

    /// Gemma 4's rules, where its syntax differs from JSON's: strings between `<|"|>` marks (a
    /// character is anything that does not begin one), bare keys.
    private static let gemmaPrimitives: [String: (body: String, uses: [String])] = [
        "char": (#"[^<] | "<" ([^|] | "|" ([^"] | "\"" ([^|] | "|" [^>])))"#, []),
        "string": (#""<|\"|>" char* "<|\"|>""#, ["char"]),
        "key": (#"[a-zA-Z0-9_.-]+"#, []),
        "object": (#""{" ws ( key ":" ws value ("," ws key ":" ws value)* )? ws "}""#, ["ws", "key", "value"]),
        "array": (#""[" ws ( value ("," ws value)* )? ws "]""#, ["ws", "value"]),
    ]

    /// The character of an XML parameter's bare text: a line may not start with `<` (its
    /// `</parameter>` ends the value).
    private static let xmlCharacter = #"[^\n] | "\n" [^<]"#

    /// The body of the primitive rule `name` in this syntax, and the rules it uses.
    private func primitiveRule(_ name: String) -> (body: String, uses: [String])? {
        if syntax == .xmlParameters, name == "xml-char" { return (Self.xmlCharacter, []) }
        return (syntax == .gemma4 ? Self.gemmaPrimitives[name] : nil) ?? Self.primitives[name]
    }

    /// The GBNF of the mark around a string.
    private var quote: String { GBNFText.literal(syntax == .gemma4 ? "<|\"|>" : "\"") }

    /// The GBNF between two members or items.
    private var itemSeparator: String { syntax == .gemma4 ? "\",\" ws" : "ws \",\" ws" }

    /// The GBNF of a member's key and colon, before its value (Gemma 4's key is bare and meets its colon).
    private func keyAndColon(_ key: String) -> String {
        syntax == .gemma4 ? GBNFText.literal(key + ":") + " ws" : GBNFText.literal(PythonText.json(key, ensureASCII: false)) + " ws \":\" ws"
    }

    /// The GBNF of exactly `value` (a `const` or `enum` member) in this syntax.
    private func literal(_ value: OrderedJSON) -> String {
        GBNFText.literal(syntax == .gemma4 ? Self.gemmaText(of: value) : value.text)
    }

    /// `value` in Gemma 4's syntax, as its chat template writes a call's arguments (keys bare).
    /// (The recursion is as deep as the value, which `OrderedJSON`'s reader bounds.)
    private static func gemmaText(of value: OrderedJSON) -> String {
        switch value {
        case .string(let text): "<|\"|>" + text + "<|\"|>"
        case .array(let items): "[" + items.map(gemmaText(of:)).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { $0.key + ":" + gemmaText(of: $0.value) }.joined(separator: ",") + "}"
        default: value.text
        }
    }

    /// The GBNF grammar of JSON documents valid against the schema JSON text `text`.
    static func gbnf(schema text: String) throws(GrammarError) -> String {
        let schema: OrderedJSON
        do {
            schema = try OrderedJSON(parsing: text)
        } catch {
            throw GrammarError(source, at: .text(line: error.line, column: error.column), error.reason)
        }
        var converter = JSONSchemaGrammar(schema)
        return try converter.gbnf()
    }

    /// The grammar of any JSON object.
    static let anyObject = "root ::= object\n" + ["object", "ws", "string", "char", "value", "array", "number", "integral-part", "boolean", "null"]
        .map { "\($0) ::= \(primitives[$0]!.body)" }.joined(separator: "\n") + "\n"

    /// The GBNF grammar of one or more (`separator` between them; exactly one when nil) of the
    /// texts `alternatives` describe: each its prefix, a value valid against its schema (JSON
    /// text) written in `syntax`, then its suffix. One converter writes every schema's rules, so
    /// their names never clash; each schema's `$ref`s point into itself.
    static func gbnf(alternatives: [(prefix: String, schema: String, suffix: String)], separator: String?,
                     syntax: Grammar.ValueSyntax) throws(GrammarError) -> String {
        var converter = JSONSchemaGrammar(.bool(true), syntax: syntax)
        var choices: [String] = []
        for (index, alternative) in alternatives.enumerated() {
            do {
                converter.schema = try OrderedJSON(parsing: alternative.schema)
            } catch {
                throw GrammarError(source, at: .text(line: error.line, column: error.column), error.reason)
            }
            converter.references = [:]
            let rule = try converter.rule(for: converter.schema, name: "alternative-\(index)", pointer: "")
            choices.append([GBNFText.literal(alternative.prefix), rule, GBNFText.literal(alternative.suffix)].filter { $0 != "\"\"" }.joined(separator: " "))
        }
        let one = choices.count == 1 ? choices[0] : "(" + choices.joined(separator: " | ") + ")"
        let root = separator.map { "\(one) (\(GBNFText.literal($0)) \(one))*" } ?? one
        return "root ::= \(root)\n" + converter.order.map { "\($0) ::= \(converter.rules[$0]!)" }.joined(separator: "\n") + "\n"
    }

    /// The grammar, root first.
    mutating func gbnf() throws(GrammarError) -> String {
        let root = try expression(for: schema, name: "root", pointer: "")
        define("root", root)
        return (["root"] + order.filter { $0 != "root" }).map { "\($0) ::= \(rules[$0]!)" }.joined(separator: "\n") + "\n"
    }

    // MARK: - Rules

    private mutating func define(_ name: String, _ body: String) {
        if rules[name] == nil { order.append(name) }
        rules[name] = body
    }

    /// A primitive rule (and those it uses), returned by name.
    private mutating func primitive(_ name: String) -> String {
        guard rules[name] == nil, let (body, uses) = primitiveRule(name) else { return name }
        define(name, body)
        for used in uses { _ = primitive(used) }
        return name
    }

    /// A fresh rule name from `base` (letters, digits and -).
    private func freshName(_ base: String) -> String {
        var cleaned = String(base.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) ? Character(scalar) : "-"
        })
        if cleaned.isEmpty { cleaned = "rule" }
        var name = cleaned
        var index = 1
        while rules[name] != nil || primitiveRule(name) != nil || name == "root" && !order.isEmpty {
            index += 1
            name = "\(cleaned)-\(index)"
        }
        return name
    }

    /// A rule for `schema` named from `name`, returned by name.
    private mutating func rule(for schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        let fresh = freshName(name)
        define(fresh, "")
        define(fresh, try expression(for: schema, name: fresh, pointer: pointer))
        return fresh
    }

    private func error(_ pointer: String, _ reason: String) -> GrammarError {
        GrammarError(Self.source, at: .schema(pointer: pointer), reason)
    }

    // MARK: - Schemas

    /// The GBNF expression of the JSON values `schema` accepts.
    private mutating func expression(for schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        guard case .object(let members) = schema else {
            if case .bool(true) = schema { return primitive("value") }
            if case .bool(false) = schema { throw error(pointer, "the schema false accepts nothing") }
            throw error(pointer, "a schema must be an object or a boolean, not \(schema.text)")
        }
        let handled: Set<String> = ["$ref", "const", "enum", "anyOf", "oneOf", "allOf", "type", "properties", "required", "additionalProperties",
                                    "items", "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
                                    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
        for (key, _) in members where !handled.contains(key) && !Self.annotations.contains(key) {
            throw error(pointer + "/" + key, "keyword \"\(key)\" is not supported")
        }
        if let reference = schema["$ref"] {
            return try self.reference(reference, pointer: pointer + "/$ref")
        }
        if let value = schema["const"] { return literal(value) }
        if let values = schema["enum"] {
            guard case .array(let items) = values, !items.isEmpty else { throw error(pointer + "/enum", "enum must be a non-empty array") }
            return "(" + items.map(literal).joined(separator: " | ") + ")"
        }
        for keyword in ["anyOf", "oneOf"] {
            if let alternatives = schema[keyword] {
                guard case .array(let items) = alternatives, !items.isEmpty else { throw error(pointer + "/" + keyword, "\(keyword) must be a non-empty array") }
                var parts: [String] = []
                for (index, item) in items.enumerated() {
                    parts.append(try rule(for: item, name: "\(name)-\(index)", pointer: "\(pointer)/\(keyword)/\(index)"))
                }
                return "(" + parts.joined(separator: " | ") + ")"
            }
        }
        if let all = schema["allOf"] {
            guard case .array(let items) = all, items.count == 1 else {
                throw error(pointer + "/allOf", "allOf is supported with one schema only (merging several is not)")
            }
            return try expression(for: items[0], name: name, pointer: pointer + "/allOf/0")
        }
        let types: [String]
        switch schema["type"] {
        case .string(let type)?: types = [type]
        case .array(let list)?:
            types = try list.map { item throws(GrammarError) in
                guard case .string(let type) = item else { throw error(pointer + "/type", "type must name types") }
                return type
            }
        case nil:
            types = schema["properties"] != nil || schema["additionalProperties"] != nil ? ["object"]
                : schema["items"] != nil || schema["prefixItems"] != nil ? ["array"] : []
        default: throw error(pointer + "/type", "type must be a string or an array of strings")
        }
        if types.isEmpty { return primitive("value") }
        var parts: [String] = []
        for type in types {
            parts.append(try expression(for: schema, type: type, name: name, pointer: pointer))
        }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " | ") + ")"
    }

    private mutating func expression(for schema: OrderedJSON, type: String, name: String, pointer: String) throws(GrammarError) -> String {
        switch type {
        case "object": return try object(schema, name: name, pointer: pointer)
        case "array": return try array(schema, name: name, pointer: pointer)
        case "string": return try string(schema, name: name, pointer: pointer)
        case "integer": return try integer(schema, pointer: pointer)
        case "number": return try number(schema, pointer: pointer)
        case "boolean": return primitive("boolean")
        case "null": return primitive("null")
        default: throw error(pointer + "/type", "unknown type \"\(type)\"")
        }
    }

    private mutating func reference(_ reference: OrderedJSON, pointer: String) throws(GrammarError) -> String {
        guard case .string(let target) = reference, target.hasPrefix("#") else {
            throw error(pointer, "only references within the schema (#/$defs/…) are supported")
        }
        if let known = references[target] { return known }
        var resolved = schema
        for part in target.dropFirst().split(separator: "/", omittingEmptySubsequences: true) {
            let key = String(part).replacing("~1", with: "/").replacing("~0", with: "~")
            guard let next = resolved[key] else { throw error(pointer, "reference \(target) points to nothing") }
            resolved = next
        }
        let name = freshName(String(target.split(separator: "/").last ?? "ref"))
        references[target] = name
        define(name, "")
        define(name, try expression(for: resolved, name: name, pointer: String(target.dropFirst())))
        return name
    }

    private mutating func object(_ schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        var properties: [(key: String, value: OrderedJSON)] = []
        if let given = schema["properties"] {
            guard case .object(let members) = given else { throw error(pointer + "/properties", "properties must be an object") }
            properties = members
        }
        var required: Set<String> = []
        if let given = schema["required"] {
            guard case .array(let items) = given else { throw error(pointer + "/required", "required must be an array of names") }
            for item in items {
                guard case .string(let key) = item else { throw error(pointer + "/required", "required must be an array of names") }
                guard properties.contains(where: { $0.key == key }) || schema["additionalProperties"].map({ $0 != .bool(false) }) == true else {
                    throw error(pointer + "/required", "\"\(key)\" is required but not among the properties")
                }
                required.insert(key)
            }
        }
        // The arguments' object in XML parameters: each member a `<parameter=…>` block, strings bare.
        let xml = syntax == .xmlParameters && pointer.isEmpty
        var pairs: [(rule: String, required: Bool)] = []
        for (key, value) in properties {
            let valueRule = try xml ? xmlValue(value, name: "\(name)-\(key)", pointer: "\(pointer)/properties/\(key)")
                : rule(for: value, name: "\(name)-\(key)", pointer: "\(pointer)/properties/\(key)")
            pairs.append((xml ? xmlMember(key, valueRule, name: name) : member(key, valueRule, name: name), required.contains(key)))
        }
        for key in required where !xml && !properties.contains(where: { $0.key == key }) {
            let valueRule = try rule(for: schema["additionalProperties"] ?? .bool(true), name: "\(name)-\(key)", pointer: pointer + "/additionalProperties")
            pairs.append((member(key, valueRule, name: name), true))
        }
        var extra: String?
        switch schema["additionalProperties"] {
        case _ where xml, nil, .bool(false)?: extra = nil
        case let additional?:
            let valueRule = try rule(for: additional, name: "\(name)-additional", pointer: pointer + "/additionalProperties")
            let known = properties.map(\.key)
            let anyKey = syntax == .gemma4 ? "key" : "string"
            let keyRule = known.isEmpty ? primitive(anyKey) : freshName("\(name)-additional-key")
            if !known.isEmpty {
                // Any key but the named properties' (which have rules of their own).
                define(keyRule, primitive(anyKey))
            }
            let pair = freshName("\(name)-additional-kv")
            define(pair, syntax == .gemma4 ? "\(keyRule) \":\" ws \(valueRule)" : "\(keyRule) ws \":\" ws \(valueRule)")
            extra = pair
        }
        _ = primitive("ws")
        // The members in the schema's order, required ones always, each optional one present or
        // not, then any additional ones; commas between what is present. One rule per (position,
        // whether a member came before) keeps the grammar linear in the number of properties.
        let separator = xml ? "" : itemSeparator
        var tails: [String: String] = [:]
        func tail(from index: Int, first: Bool) -> String {
            let key = "\(index)-\(first)"
            if let known = tails[key] { return known }
            let body: String
            if index == pairs.count {
                body = extra.map { first ? "(\($0) (\(separator) \($0))*)?" : "(\(separator) \($0))*" } ?? ""
            } else {
                let (rule, isRequired) = pairs[index]
                let present = ((first ? "" : separator + " ") + rule + " " + tail(from: index + 1, first: false)).trimmingSpaces
                body = isRequired ? present : "(" + present + " | " + tail(from: index + 1, first: first) + ")"
            }
            guard !body.isEmpty else { return "" }
            let name = freshName("\(name)-members")
            define(name, body)
            tails[key] = name
            return name
        }
        let members = tail(from: 0, first: true)
        if xml { return members.isEmpty ? "\"\"" : members }
        return "\"{\" ws \(members.isEmpty ? "" : members + " ws ")\"}\""
    }

    /// A rule for the XML parameter `key` whose value is `valueRule`'s, returned by name.
    private mutating func xmlMember(_ key: String, _ valueRule: String, name: String) -> String {
        let pair = freshName("\(name)-\(key)-parameter")
        define(pair, "\(GBNFText.literal("<parameter=\(key)>\n")) \(valueRule) \(GBNFText.literal("\n</parameter>\n"))")
        return pair
    }

    /// The GBNF of an XML parameter's value: a string schema's text bare (its enum or const the
    /// strings themselves, its length bounds kept; no line of it starts with `<`), any other
    /// schema's value as JSON.
    private mutating func xmlValue(_ schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        guard schema["type"] == .string("string"), schema["pattern"] == nil, schema["format"] == nil else {
            return try rule(for: schema, name: name, pointer: pointer)
        }
        if case .string(let value)? = schema["const"] { return GBNFText.literal(value) }
        if case .array(let items)? = schema["enum"] {
            let strings = items.compactMap { if case .string(let value) = $0 { GBNFText.literal(value) } else { nil } }
            guard !strings.isEmpty else { throw error(pointer + "/enum", "enum must be a non-empty array") }
            return "(" + strings.joined(separator: " | ") + ")"
        }
        let minimum = try count(schema, "minLength", pointer: pointer) ?? 0
        let maximum = try count(schema, "maxLength", pointer: pointer)
        if let maximum, maximum < minimum { throw error(pointer + "/maxLength", "maxLength \(maximum) is below minLength \(minimum)") }
        return primitive("xml-char") + (maximum.map { "{\(minimum),\($0)}" } ?? (minimum == 0 ? "*" : "{\(minimum),}"))
    }

    /// A rule for the member `key` whose value is `valueRule`'s, returned by name.
    private mutating func member(_ key: String, _ valueRule: String, name: String) -> String {
        let pair = freshName("\(name)-\(key)-kv")
        define(pair, "\(keyAndColon(key)) \(valueRule)")
        return pair
    }

    private mutating func array(_ schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        let minimum = try count(schema, "minItems", pointer: pointer) ?? 0
        let maximum = try count(schema, "maxItems", pointer: pointer)
        if let maximum, maximum < minimum { throw error(pointer + "/maxItems", "maxItems \(maximum) is below minItems \(minimum)") }
        var prefix: [OrderedJSON] = []
        var rest: OrderedJSON? = schema["items"] ?? .bool(true)
        if case .array(let tuple)? = schema["prefixItems"] ?? (schema["items"].flatMap { if case .array = $0 { $0 } else { nil } }) {
            prefix = tuple
            rest = schema["prefixItems"] != nil ? (schema["items"] ?? .bool(true)) : (schema["additionalItems"] ?? .bool(true))
            if rest == .bool(false) { rest = nil }
        } else if schema["prefixItems"] != nil {
            throw error(pointer + "/prefixItems", "prefixItems must be an array of schemas")
        }
        _ = primitive("ws")
        let separator = itemSeparator
        var itemRules: [String] = []
        for (index, item) in prefix.enumerated() {
            itemRules.append(try rule(for: item, name: "\(name)-\(index)", pointer: "\(pointer)/prefixItems/\(index)"))
        }
        if !prefix.isEmpty {
            // A tuple: its items in order, as many as the bounds allow, then the rest if any.
            guard minimum <= prefix.count || rest != nil else { throw error(pointer + "/minItems", "minItems \(minimum) is more than the \(prefix.count) items allowed") }
            var body = ""
            for index in stride(from: prefix.count - 1, through: 0, by: -1) {
                let item = (index == 0 ? "" : "\(separator) ") + itemRules[index]
                body = index < minimum ? "\(item) \(body)" : "(\(item) \(body))?"
            }
            if rest != nil, maximum.map({ $0 > prefix.count }) ?? true {
                let restRule = try rule(for: rest!, name: "\(name)-item", pointer: pointer + "/items")
                let more = maximum.map { "{\(max(0, minimum - prefix.count)),\($0 - prefix.count)}" } ?? (minimum > prefix.count ? "{\(minimum - prefix.count),}" : "*")
                body += " (\(separator) \(restRule))\(more)"
            }
            return "\"[\" ws \(body) ws \"]\""
        }
        guard let rest else { return "\"[\" ws \"]\"" }
        let item = try rule(for: rest, name: "\(name)-item", pointer: pointer + "/items")
        if maximum == 0 { return "\"[\" ws \"]\"" }
        let more = maximum.map { "{\(max(0, minimum - 1)),\($0 - 1)}" } ?? (minimum > 1 ? "{\(minimum - 1),}" : "*")
        let list = "\(item) (\(separator) \(item))\(more)"
        return "\"[\" ws " + (minimum == 0 ? "(\(list))?" : list) + " ws \"]\""
    }

    private mutating func string(_ schema: OrderedJSON, name: String, pointer: String) throws(GrammarError) -> String {
        if case .string(let format)? = schema["format"], ["date", "time", "date-time", "uuid"].contains(format) {
            return "\(quote) \(primitive(format)) \(quote)"
        }
        if let pattern = schema["pattern"] {
            guard case .string(let text) = pattern else { throw error(pointer + "/pattern", "pattern must be a string") }
            var regex = RegexGrammar(text, jsonString: syntax == .json, source: "JSON schema at \(pointer)/pattern")
            let (body, anchoredStart, anchoredEnd) = try regex.expression()
            let any = primitive("char")
            // A pattern matches anywhere in the string unless anchored.
            return "\(quote) \(anchoredStart ? "" : "\(any)* ")(\(body.isEmpty ? "\"\"" : body))\(anchoredEnd ? "" : " \(any)*") \(quote)"
        }
        let minimum = try count(schema, "minLength", pointer: pointer) ?? 0
        let maximum = try count(schema, "maxLength", pointer: pointer)
        if let maximum, maximum < minimum { throw error(pointer + "/maxLength", "maxLength \(maximum) is below minLength \(minimum)") }
        let char = primitive("char")
        let repeated = maximum.map { "{\(minimum),\($0)}" } ?? (minimum == 0 ? "*" : "{\(minimum),}")
        return "\(quote) \(char)\(repeated) \(quote)"
    }

    private func count(_ schema: OrderedJSON, _ keyword: String, pointer: String) throws(GrammarError) -> Int? {
        guard let value = schema[keyword] else { return nil }
        guard case .number(let number, _) = value, number >= 0, number == number.rounded(), number <= 2000 else {
            throw error(pointer + "/" + keyword, "\(keyword) must be a whole number from 0 to 2000")
        }
        return Int(number)
    }

    // MARK: - Numbers in a range

    /// A number, between its bounds when it has them (`NumberRangeGrammar`: written without an
    /// exponent then).
    private mutating func number(_ schema: OrderedJSON, pointer: String) throws(GrammarError) -> String {
        func bound(_ keyword: String, exclusive: Bool) throws(GrammarError) -> NumberRangeGrammar.Bound? {
            guard let value = schema[keyword] else { return nil }
            guard case .number(let number, let text) = value, abs(number) < 1e15, let decimal = NumberRangeGrammar.Decimal(json: text) else {
                throw error(pointer + "/" + keyword, "\(keyword) must be a number below 10^15")
            }
            return NumberRangeGrammar.Bound(value: decimal, exclusive: exclusive)
        }
        // Of two bounds on one side, the tighter (at one value, the exclusive one).
        func tighter(_ a: NumberRangeGrammar.Bound?, _ b: NumberRangeGrammar.Bound?, low: Bool) -> NumberRangeGrammar.Bound? {
            guard let a, let b else { return a ?? b }
            if a.value == b.value { return a.exclusive ? a : b }
            return a.value.isLess(than: b.value) == low ? b : a
        }
        let low = tighter(try bound("minimum", exclusive: false), try bound("exclusiveMinimum", exclusive: true), low: true)
        let high = tighter(try bound("maximum", exclusive: false), try bound("exclusiveMaximum", exclusive: true), low: false)
        if low == nil && high == nil { return primitive("number") }
        guard let expression = NumberRangeGrammar.expression(low: low, high: high) else {
            throw error(pointer, "no number lies between the bounds")
        }
        return expression
    }

    // MARK: - Integers in a range

    private mutating func integer(_ schema: OrderedJSON, pointer: String) throws(GrammarError) -> String {
        func bound(_ keyword: String) throws(GrammarError) -> Double? {
            guard let value = schema[keyword] else { return nil }
            guard case .number(let number, _) = value, abs(number) < 1e15 else { throw error(pointer + "/" + keyword, "\(keyword) must be a number below 10^15") }
            return number
        }
        var low: Int64? = try bound("minimum").map { Int64($0.rounded(.up)) }
        var high: Int64? = try bound("maximum").map { Int64($0.rounded(.down)) }
        if let exclusive = try bound("exclusiveMinimum") { low = max(low ?? .min, Int64(exclusive.rounded(.down)) + 1) }
        if let exclusive = try bound("exclusiveMaximum") { high = min(high ?? .max, Int64(exclusive.rounded(.up)) - 1) }
        if low == nil && high == nil { return primitive("integer") }
        if let low, let high, low > high { throw error(pointer, "no integer lies between the bounds \(low) and \(high)") }
        var alternatives: [String] = []
        // Non-negative values: [max(low, 0), high].
        if (high ?? 0) >= 0 {
            alternatives.append(contentsOf: Self.digits(from: UInt64(max(low ?? 0, 0)), to: high.map { UInt64($0) }))
        }
        // Negative values: "-" then a magnitude in [max(-high, 1), -low].
        if (low ?? -1) < 0 {
            let magnitudes = Self.digits(from: UInt64(max(-(high ?? -1), 1)), to: low.map { UInt64(-$0) })
            alternatives.append("\"-\" (" + magnitudes.joined(separator: " | ") + ")")
        }
        return "(" + alternatives.joined(separator: " | ") + ")"
    }

    /// Alternatives matching the decimal numbers (no leading zeros) from `low` to `high` (nil:
    /// up to 16 digits).
    static func digits(from low: UInt64, to high: UInt64?) -> [String] {
        let lowText = Array(String(low).utf8)
        let highLength = high.map { String($0).utf8.count } ?? 16
        var result: [String] = []
        for length in lowText.count...max(lowText.count, highLength) {
            let from = length == lowText.count ? lowText : Array(("1" + String(repeating: "0", count: length - 1)).utf8)
            let to = length == highLength && high != nil ? Array(String(high!).utf8) : Array(String(repeating: "9", count: length).utf8)
            if length == highLength, let high, low > high { break }
            result.append(sameLength(from[...], to[...]))
        }
        return result
    }

    /// The numbers from `low` to `high`, digit strings of one length, as a GBNF expression.
    private static func sameLength(_ low: ArraySlice<UInt8>, _ high: ArraySlice<UInt8>) -> String {
        func digitClass(_ from: UInt8, _ to: UInt8) -> String {
            from == to ? "\"\(Character(UnicodeScalar(from)))\"" : "[\(Character(UnicodeScalar(from)))-\(Character(UnicodeScalar(to)))]"
        }
        guard let first = low.first, let last = high.first else { return "\"\"" }
        let rest = low.count - 1
        if rest == 0 { return digitClass(first, last) }
        if low.dropFirst().allSatisfy({ $0 == UInt8(ascii: "0") }) && high.dropFirst().allSatisfy({ $0 == UInt8(ascii: "9") }) {
            return "\(digitClass(first, last)) [0-9]{\(rest)}"
        }
        if first == last { return "\(digitClass(first, first)) \(sameLength(low.dropFirst(), high.dropFirst()))" }
        let nines = Array(repeating: UInt8(ascii: "9"), count: rest)[...]
        let zeros = Array(repeating: UInt8(ascii: "0"), count: rest)[...]
        var parts = ["\(digitClass(first, first)) \(sameLength(low.dropFirst(), nines))"]
        if last - first > 1 { parts.append("\(digitClass(first + 1, last - 1)) [0-9]{\(rest)}") }
        parts.append("\(digitClass(last, last)) \(sameLength(zeros, high.dropFirst()))")
        return "(" + parts.joined(separator: " | ") + ")"
    }
}

private extension String {
    /// The text without spaces at either end.
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
