import GenerationTypes
import Grammars
import OrderedJSON
import PythonText
import Tokenizers

/// How a family's chat format writes the tool calls of a reply — Qwen 2.5/3's and Hermes' JSON in
/// `<tool_call>` tags, Llama 3.x's bare JSON object, gpt-oss's harmony recipient
/// `to=functions.NAME`, Gemma 4's `<|tool_call>call:NAME{…}`, Qwen 3.5's and Qwen3-Coder's XML
/// parameters — and the split of a reply into its text and its calls, as llama-server's
/// `--jinja` mode parses them. The table of syntaxes is `all`; a template whose source shows none
/// of them describes no tools, and its replies are all text.
///
/// A reply is text up to the first place a call starts (one of `starts`), then calls, each
/// followed by `end` (which the output may also stop before: an end-of-generation token such as
/// harmony's `<|call|>`). A call that names no offered function, or whose JSON is not an object
/// with the name and arguments, is not a call: the reply from there on stays text, so nothing
/// generated is lost. A call cut off by the end of the output keeps the arguments written so far,
/// as llama.cpp's lenient parse does.
public struct ToolCallSyntax: Sendable, Equatable {
    /// How a call names its function and gives its arguments.
    public enum Shape: Sendable, Equatable {
        /// A JSON object with the name under `nameKey` and the arguments (an object) under one of
        /// `argumentKeys`; `startsObject` when the start marker is the object's own beginning.
        case jsonObject(nameKey: String, argumentKeys: [String], startsObject: Bool)
        /// A harmony header naming the function after the start marker (up to white space or a
        /// special token), then the arguments after `<|message|>`.
        case recipient
        /// The function's name after the start marker, then its arguments as a Gemma 4 value
        /// (`{city:<|"|>Paris<|"|>}`), read into JSON.
        case gemma
        /// `<function=NAME>`, then each argument as `<parameter=KEY>`, its value on the lines
        /// after, `</parameter>`, then `</function>`: a value is text where the function's schema
        /// says the parameter is a string, else JSON (text when it does not parse as the types
        /// the schema allows), as llama.cpp's Qwen3-Coder parser reads it.
        case xmlParameters
    }

    /// Its name, for messages.
    public let name: String
    /// The texts a call starts with (the first is the one a grammar writes).
    public let starts: [String]
    /// What ends a call ("" when the call's JSON ends it).
    public let end: String
    /// What comes between two calls in a grammar that writes several; nil: one call per reply.
    public let separator: String?
    /// How the call is written.
    public let shape: Shape
    /// Special tokens an output must show as text for the calls to be seen.
    public let shownTokens: [String]
    /// Texts whose presence in a template's source says the template writes this syntax.
    let templateMarkers: [String]

    /// Qwen 2.5/3's, Hermes 2 Pro/3's and SmolLM3's `<tool_call>` JSON `</tool_call>`.
    public static let hermes = ToolCallSyntax(name: "Hermes <tool_call>", starts: ["<tool_call>\n", "<tool_call>"], end: "</tool_call>", separator: "\n",
                                              shape: .jsonObject(nameKey: "name", argumentKeys: ["arguments"], startsObject: false),
                                              shownTokens: ["<tool_call>", "</tool_call>"], templateMarkers: ["<function-name>"])
    /// Llama 3.1–3.3's JSON object `{"name": …, "parameters": …}` (one call per reply).
    public static let llama3 = ToolCallSyntax(name: "Llama 3 JSON", starts: [#"{"name": "#, #"{"name":"#], end: "", separator: nil,
                                              shape: .jsonObject(nameKey: "name", argumentKeys: ["parameters", "arguments"], startsObject: true),
                                              shownTokens: [], templateMarkers: ["dictionary of argument name and its value"])
    /// gpt-oss's harmony: a commentary-channel message to `functions.NAME`.
    /// (`<|call|>` ends the model's turn: one call per reply.)
    public static let harmony = ToolCallSyntax(name: "harmony", starts: ["<|channel|>commentary to=functions.", " to=functions.", "to=functions."], end: "<|call|>",
                                               separator: nil, shape: .recipient,
                                               shownTokens: ["<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|constrain|>", "<|call|>"],
                                               templateMarkers: ["commentary channel: 'functions'"])

    /// Gemma 4's `<|tool_call>call:NAME{…}<tool_call|>`, calls one after another.
    public static let gemma4 = ToolCallSyntax(name: "Gemma 4", starts: ["<|tool_call>call:"], end: "<tool_call|>", separator: "", shape: .gemma,
                                              shownTokens: ["<|tool_call>", "<tool_call|>", "<|\"|>"], templateMarkers: ["'<|tool_call>call:'"])

    /// Qwen 3.5's and Qwen3-Coder's (and Nemotron 3 Nano's) `<tool_call>` with XML parameters.
    public static let qwenXML = ToolCallSyntax(name: "Qwen XML parameters", starts: ["<tool_call>"], end: "</tool_call>", separator: "\n", shape: .xmlParameters,
                                               shownTokens: ["<tool_call>", "</tool_call>"], templateMarkers: ["<parameter="])

    /// Every syntax, in the order a template's source is checked for them.
    public static let all: [ToolCallSyntax] = [harmony, gemma4, qwenXML, hermes, llama3]

    /// The syntax a chat template's source writes, if any.
    public static func used(byTemplate source: String) -> ToolCallSyntax? {
        all.first { syntax in syntax.templateMarkers.contains { source.contains($0) } }
    }

    /// The ids of `shownTokens` in `vocabulary` (those it has as tokens).
    public func shownTokenIDs(in vocabulary: Vocabulary) -> Set<Int32> {
        Set(shownTokens.compactMap { vocabulary.id(of: Array($0.utf8)) })
    }

    /// What a grammar that makes the model call a tool writes before the arguments of a call of
    /// `function` (the arguments are then a JSON object, followed by `callSuffix`): for a JSON
    /// shape, the start and the object's beginning up to the arguments' key.
    public func callPrefix(function: String) -> String {
        switch shape {
        case .jsonObject(let nameKey, let argumentKeys, let startsObject):
            func json(_ text: String) -> String { PythonText.json(text, ensureASCII: false) }
            let opening = "{" + json(nameKey) + ": " + json(function) + ", " + json(argumentKeys[0]) + ": "
            return startsObject ? opening : starts[0] + opening
        case .recipient:
            return starts[0] + function + " <|constrain|>json<|message|>"
        case .gemma:
            return starts[0] + function
        case .xmlParameters:
            return starts[0] + "\n<function=" + function + ">\n"
        }
    }

    /// The syntax a grammar writes the arguments in.
    public var argumentSyntax: Grammar.ValueSyntax {
        switch shape {
        case .gemma: .gemma4
        case .xmlParameters: .xmlParameters
        case .jsonObject, .recipient: .json
        }
    }

    /// What a grammar writes after a call's arguments.
    public var callSuffix: String {
        switch shape {
        case .jsonObject(_, _, let startsObject): "}" + (startsObject ? "" : "\n" + end)
        case .recipient: ""
        case .gemma: end
        case .xmlParameters: "</function>\n" + end
        }
    }

    /// The grammar that makes a reply call a tool when `choice` asks for a call (nil for `auto`
    /// and `none`): calls of `functions` (the named one alone for a named choice) in this
    /// syntax, their arguments valid against each function's schema; with `parallel`, one or
    /// more calls where the syntax writes several.
    ///
    /// - Throws: `GrammarError` naming what is wrong in a schema and where.
    public func constraint(calling functions: [ToolFunction], choice: ToolChoice, parallel: Bool) throws(GrammarError) -> OutputConstraint? {
        let called: [ToolFunction]
        switch choice {
        case .auto, .none: return nil
        case .required: called = functions
        case .function(let name): called = functions.filter { $0.name == name }
        }
        let several = parallel && choice == .required
        return .grammar(try Grammar.gbnf(toolCalls: called.map { (callPrefix(function: $0.name), $0.parameters, callSuffix) },
                                         separator: several ? separator : nil, syntax: argumentSyntax))
    }

    /// Where, in `text`, a call may start: the first start marker found (its offset in UTF-8
    /// bytes), or else the start of an ending that begins one (which the next text may
    /// complete), or nil. Text before it is the reply's for certain.
    func candidateStart(in text: [UInt8], from position: Int = 0) -> (offset: Int, complete: Bool)? {
        var best: (offset: Int, complete: Bool)?
        for start in starts {
            let marker = Array(start.utf8)
            if let found = Self.firstIndex(of: marker, in: text, from: max(0, position - marker.count)), best.map({ found < $0.offset || found == $0.offset && !$0.complete }) ?? true {
                best = (found, true)
            }
        }
        if let best, best.complete { return best }
        for start in starts {
            let marker = Array(start.utf8)
            for length in stride(from: min(marker.count - 1, text.count), to: 0, by: -1) where text.suffix(length).elementsEqual(marker.prefix(length)) {
                let offset = text.count - length
                if best.map({ offset < $0.offset }) ?? true { best = (offset, false) }
                break
            }
        }
        return best
    }

    /// The reply `text` split into its text and its calls of the functions `offered`;
    /// `complete` when the output has ended (a call cut off is then kept as far as it goes; while
    /// it grows, a call is taken only once it has ended). The calls' ids are left empty.
    public func split(_ text: String, offered: [ToolFunction], complete: Bool) -> (content: String, calls: [ToolCall]) {
        let offered = Dictionary(offered.map { ($0.name, $0) }) { first, _ in first }
        let bytes = Array(text.utf8)
        guard let first = candidateStart(in: bytes), first.complete else { return (text, []) }
        var calls: [ToolCall] = []
        var position = first.offset
        var contentEnd = first.offset
        while true {
            guard let (call, next) = self.call(in: bytes, at: position, offered: offered, complete: complete) else { break }
            calls.append(call)
            position = next
            contentEnd = next
            // The next call, after white space.
            let cursor = Self.skippingSpace(bytes, from: position)
            guard starts.contains(where: { Self.hasPrefix(Array($0.utf8), in: bytes, at: cursor) }) else { break }
            position = cursor
        }
        guard !calls.isEmpty else { return (text, []) }
        let before = String(decoding: bytes[..<first.offset], as: UTF8.self)
        let rest = String(decoding: bytes[contentEnd...], as: UTF8.self)
        return (before + (rest.allSatisfy(\.isWhitespace) ? "" : rest), calls)
    }

    /// The call starting at `position` (at a start marker) and where what follows it begins, or
    /// nil when there is none there.
    private func call(in bytes: [UInt8], at position: Int, offered: [String: ToolFunction], complete: Bool) -> (ToolCall, Int)? {
        guard let marker = starts.map({ Array($0.utf8) }).first(where: { Self.hasPrefix($0, in: bytes, at: position) }) else { return nil }
        let endMarker = Array(end.utf8)
        switch shape {
        case .jsonObject(let nameKey, let argumentKeys, let startsObject):
            let objectStart = Self.skippingSpace(bytes, from: startsObject ? position : position + marker.count)
            let scan = JSONObjectScan(bytes, from: objectStart)
            guard let nameRange = scan.members.first(where: { $0.key == nameKey })?.value,
                  case .string(let name)? = try? OrderedJSON(parsing: String(decoding: bytes[nameRange], as: UTF8.self)), offered[name] != nil,
                  let arguments = scan.members.first(where: { argumentKeys.contains($0.key) })?.value ?? scan.openValue.flatMap({ argumentKeys.contains($0.key) ? $0.start..<bytes.count : nil })
            else { return nil }
            let argumentsText = String(decoding: bytes[arguments], as: UTF8.self)
            guard let objectEnd = scan.end else {
                return complete ? (ToolCall(id: "", name: name, arguments: argumentsText), bytes.count) : nil
            }
            var next = objectEnd
            if !endMarker.isEmpty {
                let afterSpace = Self.skippingSpace(bytes, from: objectEnd)
                if Self.hasPrefix(endMarker, in: bytes, at: afterSpace) {
                    next = afterSpace + endMarker.count
                } else if !(complete && afterSpace == bytes.count) {
                    return nil
                }
            }
            return (ToolCall(id: "", name: name, arguments: argumentsText), next)
        case .recipient:
            let nameStart = position + marker.count
            var nameEnd = nameStart
            while nameEnd < bytes.count, !Self.isSpace(bytes[nameEnd]), bytes[nameEnd] != UInt8(ascii: "<") { nameEnd += 1 }
            let name = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)
            guard nameEnd < bytes.count || complete, offered[name] != nil,
                  let message = Self.firstIndex(of: Array("<|message|>".utf8), in: bytes, from: nameEnd) else { return nil }
            let argumentsStart = message + "<|message|>".utf8.count
            let argumentsEnd = Self.firstIndex(of: endMarker, in: bytes, from: argumentsStart)
            guard argumentsEnd != nil || complete else { return nil }
            let arguments = String(decoding: bytes[argumentsStart..<(argumentsEnd ?? bytes.count)], as: UTF8.self)
            return (ToolCall(id: "", name: name, arguments: arguments.trimmingWhitespace()), argumentsEnd.map { $0 + endMarker.count } ?? bytes.count)
        case .gemma:
            let nameStart = position + marker.count
            guard let brace = bytes[nameStart...].firstIndex(of: UInt8(ascii: "{")) else { return nil }
            let name = String(decoding: bytes[nameStart..<brace], as: UTF8.self)
            let scan = GemmaValueScan(bytes, from: brace)
            guard offered[name] != nil, let arguments = scan.json else { return nil }
            guard let valueEnd = scan.end else { return complete ? (ToolCall(id: "", name: name, arguments: arguments), bytes.count) : nil }
            if ToolCallSyntax.hasPrefix(endMarker, in: bytes, at: valueEnd) { return (ToolCall(id: "", name: name, arguments: arguments), valueEnd + endMarker.count) }
            return complete && valueEnd == bytes.count ? (ToolCall(id: "", name: name, arguments: arguments), valueEnd) : nil
        case .xmlParameters:
            return xmlCall(in: bytes, from: position + marker.count, offered: offered, complete: complete)
        }
    }

    /// The call in XML parameters whose `<function=` is at or after `start` (after white space),
    /// and where what follows it begins.
    private func xmlCall(in bytes: [UInt8], from start: Int, offered: [String: ToolFunction], complete: Bool) -> (ToolCall, Int)? {
        let functionMarker = Array("<function=".utf8), parameterMarker = Array("<parameter=".utf8)
        let closing = Array("\n</parameter>".utf8), functionEnd = Array("</function>".utf8)
        var cursor = Self.skippingSpace(bytes, from: start)
        guard Self.hasPrefix(functionMarker, in: bytes, at: cursor),
              let nameEnd = bytes[(cursor + functionMarker.count)...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let name = String(decoding: bytes[(cursor + functionMarker.count)..<nameEnd], as: UTF8.self)
        guard let function = offered[name] else { return nil }
        let types = Self.parameterTypes(function.parameters)
        var members: [String] = []
        func call(closed: Bool) -> ToolCall {
            ToolCall(id: "", name: name, arguments: "{" + members.joined(separator: ",") + (closed ? "}" : ""))
        }
        cursor = nameEnd + 1
        while true {
            cursor = Self.skippingSpace(bytes, from: cursor)
            if Self.hasPrefix(parameterMarker, in: bytes, at: cursor),
               let keyEnd = bytes[(cursor + parameterMarker.count)...].firstIndex(of: UInt8(ascii: ">")) {
                let key = String(decoding: bytes[(cursor + parameterMarker.count)..<keyEnd], as: UTF8.self)
                var valueStart = keyEnd + 1
                if valueStart < bytes.count, bytes[valueStart] == 0x0A { valueStart += 1 }
                guard let close = Self.firstIndex(of: closing, in: bytes, from: valueStart) else {
                    // Cut off inside the value: as far as it goes.
                    guard complete else { return nil }
                    let value = String(decoding: bytes[valueStart...], as: UTF8.self)
                    let json = Self.json(ofParameter: value, types: types[key])
                    members.append(PythonText.json(key, ensureASCII: false) + ":" + (json.hasPrefix("\"") ? String(json.dropLast()) : json))
                    return (call(closed: false), bytes.count)
                }
                members.append(PythonText.json(key, ensureASCII: false) + ":" + Self.json(ofParameter: String(decoding: bytes[valueStart..<close], as: UTF8.self), types: types[key]))
                cursor = close + closing.count
            } else if Self.hasPrefix(functionEnd, in: bytes, at: cursor) {
                let after = Self.skippingSpace(bytes, from: cursor + functionEnd.count)
                if Self.hasPrefix(Array(end.utf8), in: bytes, at: after) { return (call(closed: true), after + end.utf8.count) }
                return complete && after == bytes.count ? (call(closed: true), after) : nil
            } else {
                // Cut off between parameters (or before `>`): as far as it goes.
                return complete ? (call(closed: false), bytes.count) : nil
            }
        }
    }

    /// The types each parameter's schema allows (`type`, one or a list), by name; a parameter
    /// without `type` is missing.
    private static func parameterTypes(_ schema: String) -> [String: Set<String>] {
        guard let parsed = try? OrderedJSON(parsing: schema), case .object(let properties)? = parsed["properties"] else { return [:] }
        var types: [String: Set<String>] = [:]
        for (key, property) in properties {
            switch property["type"] {
            case .string(let type)?: types[key] = [type]
            case .array(let list)?: types[key] = Set(list.compactMap { if case .string(let type) = $0 { type } else { nil } })
            default: continue
            }
        }
        return types
    }

    /// A parameter's value text as JSON: a string where its schema allows strings only, else
    /// the value as written when it parses as JSON of a type the schema allows (any, without
    /// one), else a string.
    private static func json(ofParameter value: String, types: Set<String>?) -> String {
        if types != ["string"], let parsed = try? OrderedJSON(parsing: value) {
            let kind = switch parsed {
            case .object: "object"
            case .array: "array"
            case .string: "string"
            case .number(let number, _): number == number.rounded() && types?.contains("integer") == true ? "integer" : "number"
            case .bool: "boolean"
            case .null: "null"
            }
            if types == nil || types!.contains(kind) || kind == "integer" && types!.contains("number") {
                return value.trimmingWhitespace()
            }
        }
        return PythonText.json(value, ensureASCII: false)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    static func skippingSpace(_ bytes: [UInt8], from position: Int) -> Int {
        var position = position
        while position < bytes.count, isSpace(bytes[position]) { position += 1 }
        return position
    }

    static func hasPrefix(_ marker: [UInt8], in bytes: [UInt8], at position: Int) -> Bool {
        position + marker.count <= bytes.count && bytes[position..<(position + marker.count)].elementsEqual(marker)
    }

    static func firstIndex(of marker: [UInt8], in bytes: [UInt8], from position: Int) -> Int? {
        guard !marker.isEmpty, bytes.count >= marker.count else { return nil }
        var index = position
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], hasPrefix(marker, in: bytes, at: index) { return index }
            index += 1
        }
        return nil
    }
}

private extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
