import Foundation
import GenerationTypes
import Grammars
import Jinja
import OrderedJSON
import Testing
@testable import ChatTemplates

/// Tool calls against llama-server's `--jinja` mode (`Tests/reference/tool-calls.json`, made by
/// scripts/make_tool_call_references.py with the chat templates of ../shared/reference/templates):
/// conversations with tools and tool calls render byte for byte as llama-server renders them,
/// replies split into text and calls as llama-server parses them, whole and streamed alike; and
/// the grammar that makes a model call a tool accepts exactly calls that its syntax parses back.
@Suite("Tool calls against llama-server")
struct ToolCallTests {
    static func reference() throws -> OrderedJSON {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("reference/tool-calls.json")
        return try OrderedJSON(parsing: String(contentsOf: url, encoding: .utf8))
    }

    static func string(_ value: OrderedJSON?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    static func list(_ value: OrderedJSON?) -> [OrderedJSON] {
        if case .array(let items)? = value { return items }
        return []
    }

    static func members(_ value: OrderedJSON?) -> [(key: String, value: OrderedJSON)] {
        if case .object(let members)? = value { return members }
        return []
    }

    /// The request's tools as the server reads them.
    static func tools(_ reference: OrderedJSON) -> [ToolFunction] {
        list(reference["tools"]).map { tool in
            ToolFunction(name: string(tool["function"]?["name"]) ?? "", description: string(tool["function"]?["description"]) ?? "",
                         parameters: tool["function"]?["parameters"]?.text ?? "{}")
        }
    }

    /// A conversation's messages as the server reads them.
    static func messages(_ conversation: OrderedJSON) -> [ChatMessage] {
        list(conversation).map { message in
            ChatMessage(role: string(message["role"]) ?? "", content: string(message["content"]) ?? "",
                        toolCalls: list(message["tool_calls"]).map { call in
                            ToolCall(id: string(call["id"]) ?? "", name: string(call["function"]?["name"]) ?? "",
                                     arguments: string(call["function"]?["arguments"]) ?? "")
                        },
                        toolCallID: string(message["tool_call_id"]), name: string(message["name"]))
        }
    }

    static func template(_ name: String) throws -> ChatTemplate {
        let reference = try reference()
        let source = try String(contentsOfFile: try TestData.path("reference/templates/" + name), encoding: .utf8)
        return try ChatTemplate(source: source, bosToken: string(reference["bos_token"]) ?? "", eosToken: string(reference["eos_token"]) ?? "")
    }

    @Test("conversations with tools, tool calls and tools' answers render byte for byte as llama-server renders them, refusals included")
    func renders() throws {
        let reference = try Self.reference()
        let conversations = Self.list(reference["conversations"])
        let tools = Self.tools(reference)
        let renders = Self.members(reference["renders"])
        #expect(renders.count == 8)
        for (name, cases) in renders {
            let template = try Self.template(name)
            for (index, expected) in Self.list(cases).enumerated() {
                guard case .number(let now, _)? = expected["now"] else { Issue.record("\(name) #\(index): no time"); continue }
                let time = TemplateEnvironment.DateComponents.utc(secondsSince1970: Int(now))
                let rendering = Result { () throws(TemplateError) in
                    try template.render(Self.messages(conversations[index]), variables: template.llamaServerVariables(now: time), tools: tools, now: time)
                }
                if let refusal = Self.string(expected["refused"]) {
                    #expect(throws: TemplateError.self, "\(name) #\(index): llama-server refused: \(refusal)") { try rendering.get() }
                } else {
                    let wanted = try #require(Self.string(expected["prompt"]))
                    let rendered = try rendering.get()
                    #expect(rendered.utf8.elementsEqual(wanted.utf8), "\(name) #\(index)\n--- llama-server\n\(wanted)\n--- Lumen\n\(rendered)")
                }
            }
        }
    }

    @Test("each template's tool-call syntax is found from its source: Hermes tags, Llama 3 JSON, harmony, Gemma 4, Qwen's XML parameters; none for formats Lumen does not parse")
    func syntaxFromTemplate() throws {
        let expected: [String: ToolCallSyntax?] = [
            "Qwen-Qwen3-0.6B.jinja": .hermes, "Qwen-Qwen2.5-7B-Instruct.jinja": .hermes, "Qwen-QwQ-32B.jinja": .hermes,
            "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": .hermes,
            "meta-llama-Llama-3.1-8B-Instruct.jinja": .llama3, "meta-llama-Llama-3.2-3B-Instruct.jinja": .llama3,
            "meta-llama-Llama-3.3-70B-Instruct.jinja": .llama3, "openai-gpt-oss-120b.jinja": .harmony,
            "google-gemma-4-31B-it.jinja": .gemma4, "google-gemma-4-31B-it-interleaved.jinja": .gemma4,
            "Qwen3.5-4B.jinja": .qwenXML, "Qwen3-Coder.jinja": .qwenXML,
            // Python-like calls, no tools: not parsed; their replies stay text.
            "LFM2.5-Instruct.jinja": nil, "google-gemma-2-2b-it.jinja": nil,
        ]
        for (name, syntax) in expected {
            #expect(try Self.template(name).toolCalls == syntax, "\(name)")
        }
    }

    @Test("replies split into text and tool calls as llama-server parses them, whole and streamed in pieces of every size")
    func parses() throws {
        let reference = try Self.reference()
        let offered = Self.tools(reference)
        var count = 0
        for (name, cases) in Self.members(reference["parses"]) {
            let syntax = try #require(try Self.template(name).toolCalls, "\(name)")
            for expected in Self.list(cases) {
                let reply = try #require(Self.string(expected["reply"]))
                let wantedCalls = Self.list(expected["tool_calls"]).map { ($0["name"].flatMap(Self.string) ?? "", $0["arguments"].flatMap(Self.string) ?? "") }
                let wantedContent = Self.string(expected["content"]) ?? ""
                let whole = syntax.split(reply, offered: offered, complete: true)
                #expect(whole.content == wantedContent, "\(name): \(reply.debugDescription)")
                #expect(whole.calls.map { [$0.name, $0.arguments] } == wantedCalls.map { [$0.0, $0.1] }, "\(name): \(reply.debugDescription)")
                for size in [1, 2, 3, 7, reply.count] {
                    var stream = ToolCallStream(syntax: syntax, offered: offered) { "id" }
                    var content = ""
                    var calls: [ToolCall] = []
                    var rest = Substring(reply)
                    while !rest.isEmpty {
                        let gained = stream.append(String(rest.prefix(size)))
                        rest = rest.dropFirst(size)
                        content += gained.content
                        calls += gained.calls
                    }
                    let last = stream.finish()
                    content += last.content
                    calls += last.calls
                    #expect(content == wantedContent && calls.map { [$0.name, $0.arguments] } == wantedCalls.map { [$0.0, $0.1] },
                            "\(name), pieces of \(size): \(reply.debugDescription)")
                }
                count += 1
            }
        }
        #expect(count == 40)
    }

    @Test("a harmony call as gpt-oss's template writes it, after the generation prompt, is read back with its arguments; so is the analysis-first order")
    func harmonyRoundTrip() throws {
        let reference = try Self.reference()
        let template = try Self.template("openai-gpt-oss-120b.jinja")
        let syntax = try #require(template.toolCalls)
        // What the model writes after `<|start|>assistant` for the call the conversation's assistant made.
        let rendered = try #require(Self.string(Self.list(reference["renders"]?["openai-gpt-oss-120b.jinja"])[1]["prompt"]))
        let call = try #require(rendered.range(of: " to=functions.get_weather"))
        let end = try #require(rendered.range(of: "<|call|>", range: call.upperBound..<rendered.endIndex))
        let written = String(rendered[call.lowerBound..<end.upperBound])
        #expect(written == #" to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>"#)
        let prompt = "<|start|>user<|message|>Weather?<|end|><|start|>assistant"
        for output in [written, #"<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}"#] {
            let reply = ReasoningStream(syntax: template.reasoning, prompt: prompt).reply(to: output)
            let split = syntax.split(reply.content, offered: Self.tools(reference), complete: true)
            #expect(split.content == "" && split.calls.map { [$0.name, $0.arguments] } == [["get_weather", #"{"city": "Paris"}"#]], "\(output)")
        }
    }

    @Test("a tool call ends the reasoning a prompt leaves open, as llama.cpp ends Qwen's at <tool_call>: the call is read from the reply, whole and streamed")
    func toolCallEndsReasoning() throws {
        let template = try Self.template("Qwen3.5-4B.jinja")
        let syntax = try #require(template.toolCalls)
        let prompt = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\n"
        let call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
        for (output, reasoning) in [(call, nil), ("The user wants the weather.\n" + call, "The user wants the weather.\n"), ("Fine.\n</think>\n\n" + call, "Fine.\n")] {
            let whole = ReasoningStream(syntax: template.reasoning, prompt: prompt, endsBefore: syntax.starts).reply(to: output)
            #expect(whole.reasoning.flatMap { $0.isEmpty ? nil : $0 } == reasoning && whole.content == call, "\(output)")
            var stream = ReasoningStream(syntax: template.reasoning, prompt: prompt, endsBefore: syntax.starts)
            var (thought, said) = ("", "")
            for character in output {
                let gained = stream.append(String(character))
                thought += gained.reasoning
                said += gained.content
            }
            #expect(thought == (reasoning ?? "") && said == call, "\(output), streamed")
            #expect(syntax.split(said, offered: Self.tools(try Self.reference()), complete: true).calls.map(\.arguments) == [#"{"city":"Paris"}"#])
        }
    }

    /// Whether `grammar` accepts the whole of `text`, fed a byte at a time.
    static func accepts(_ grammar: Grammar, _ text: String) -> Bool {
        var matcher = GrammarMatcher(grammar, trie: TokenTrie(pieces: (0..<256).map { [UInt8($0)] } + [[]], endOfGeneration: [256]))
        for byte in text.utf8 where !matcher.accept(Int32(byte)) { return false }
        return matcher.canEnd
    }

    /// `json`, a flat JSON object, written in `syntax`'s way: Gemma 4's `{city:<|"|>Paris<|"|>}`,
    /// Qwen's `<parameter=city>` blocks.
    static func arguments(_ json: String, _ syntax: ToolCallSyntax) throws -> String {
        let members = members(try OrderedJSON(parsing: json))
        switch syntax.argumentSyntax {
        case .json: return json
        case .gemma4: return "{" + members.map { key, value in key + ":" + (string(value).map { "<|\"|>" + $0 + "<|\"|>" } ?? value.text) }.joined(separator: ",") + "}"
        case .xmlParameters: return members.map { key, value in "<parameter=\(key)>\n\(string(value) ?? value.text)\n</parameter>\n" }.joined()
        }
    }

    @Test("the grammar of tool_choice required accepts calls of the offered functions with valid arguments, which parse back; not others")
    func requiredGrammar() throws {
        let tools = Self.tools(try Self.reference())
        let offered = tools
        for syntax in ToolCallSyntax.all {
            let several = try Grammar(try #require(try syntax.constraint(calling: tools, choice: .required, parallel: true)))
            let one = try Grammar(try #require(try syntax.constraint(calling: tools, choice: .function("get_time"), parallel: true)))
            #expect(try syntax.constraint(calling: tools, choice: .auto, parallel: true) == nil)
            func call(_ name: String, _ json: String) throws -> String {
                syntax.callPrefix(function: name) + (try Self.arguments(json, syntax)) + syntax.callSuffix
            }
            let weather = try call("get_weather", #"{"city": "Paris", "unit": "celsius"}"#)
            let time = try call("get_time", #"{"zone": "UTC"}"#)
            #expect(Self.accepts(several, weather) && Self.accepts(one, time) && !Self.accepts(one, weather), "\(syntax.name)")
            #expect(!Self.accepts(several, try call("get_weather", #"{"unit": "celsius"}"#)), "\(syntax.name): city is required")
            #expect(!Self.accepts(several, try call("get_weather", #"{"city": "Paris", "unit": "kelvin"}"#)), "\(syntax.name)")
            #expect(!Self.accepts(several, try call("get_news", #"{"city": "Paris"}"#)), "\(syntax.name)")
            #expect(!Self.accepts(several, "Sure! " + weather), "\(syntax.name)")
            let split = syntax.split(weather, offered: offered, complete: true)
            #expect(split.content == "" && split.calls.map(\.name) == ["get_weather"], "\(syntax.name)")
            #expect(split.calls.first.map { try? OrderedJSON(parsing: $0.arguments) } == (try? OrderedJSON(parsing: #"{"city": "Paris", "unit": "celsius"}"#)),
                    "\(syntax.name): the arguments read back as JSON")
            if let separator = syntax.separator {
                let both = weather + separator + time
                #expect(Self.accepts(several, both) && !Self.accepts(one, both), "\(syntax.name)")
                #expect(syntax.split(both, offered: offered, complete: true).calls.map(\.name) == ["get_weather", "get_time"], "\(syntax.name)")
            } else {
                #expect(!Self.accepts(several, weather + time), "\(syntax.name): one call per reply")
            }
        }
    }
}
