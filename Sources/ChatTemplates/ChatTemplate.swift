import Foundation
import GGUF
import GenerationTypes
import Jinja
import OrderedJSON
import Tokenizers

/// How a model turns a conversation into a prompt: the Jinja chat template from the model file
/// (`tokenizer.chat_template`), one given by the user, or, when the file has none, the built-in
/// format of its architecture (`BuiltinChatTemplate`), rendered as Hugging Face transformers'
/// `apply_chat_template` does.
public struct ChatTemplate: Sendable {
    /// Where the template came from.
    public enum Origin: Sendable, Equatable {
        /// The model file's `tokenizer.chat_template`.
        case model
        /// A template the user gave (`template:` or `--template`).
        case custom
        /// The built-in format of this name, because the model file has no template.
        case builtin(String)

        /// The note a front end shows when the template is a fallback (nil for the file's own or
        /// the user's): which format was chosen and why, and the `option` that chooses another.
        public func fallbackNote(model: String, option: String?) -> String? {
            guard case .builtin(let name) = self else { return nil }
            return "note: \(model) has no chat template; using the built-in \(name) format for its architecture"
                + (option.map { " (\($0) chooses another)" } ?? "")
        }
    }

    /// The template's Jinja source.
    public let source: String
    /// Where it came from.
    public let origin: Origin
    /// The text `bos_token` stands for.
    public let bosToken: String
    /// The text `eos_token` stands for.
    public let eosToken: String
    /// How the format marks a model's reasoning, when it does.
    public let reasoning: ReasoningSyntax?
    /// Whether the template reads `enable_thinking`: whether thinking can be switched on or off.
    public let hasThinkingSwitch: Bool
    /// How the format writes a reply's tool calls, when it describes tools.
    public let toolCalls: ToolCallSyntax?
    private let template: Template

    /// The template of `gguf` (or `override`, or the built-in format chosen for the file's
    /// architecture and tokens), with BOS/EOS texts from `vocabulary`.
    public init(gguf: GGUFFile, vocabulary: Vocabulary, override: String? = nil) throws(ModelError) {
        let fileTemplate = gguf.metadata["tokenizer.chat_template"]?.stringValue
        let builtin = BuiltinChatTemplate.chosen(for: gguf, vocabulary: vocabulary)
        let source = override ?? fileTemplate ?? builtin.source
        let origin: Origin = override != nil ? .custom : fileTemplate != nil ? .model : .builtin(builtin.name)
        func text(_ id: Int32?) -> String { id.map { String(decoding: vocabulary.text(of: $0), as: UTF8.self) } ?? "" }
        do {
            try self.init(source: source, origin: origin, bosToken: text(vocabulary.bos), eosToken: text(vocabulary.eos))
        } catch {
            throw ModelError(file: gguf.path, field: override == nil ? "tokenizer.chat_template" : "template", reason: error.description)
        }
    }

    /// A template from its source.
    public init(source: String, origin: Origin = .custom, bosToken: String, eosToken: String) throws(TemplateError) {
        self.source = source
        self.origin = origin
        self.bosToken = bosToken
        self.eosToken = eosToken
        reasoning = ReasoningSyntax.used(byTemplate: source)
        hasThinkingSwitch = source.contains("enable_thinking")
        toolCalls = ToolCallSyntax.used(byTemplate: source)
        template = try Template(source)
    }

    /// The variables llama-server adds to every rendering, which `render` leaves out (as
    /// transformers does): `date_string` (`30 Nov 2026`, which Llama 3.1's template prints in place
    /// of its own default date) and `datetime` (`Nov 30 2026`), both of `now`, and, for a template
    /// that reads it, `enable_thinking` true (llama-server's default: Gemma 4's template, whose
    /// own default is off, thinks).
    public func llamaServerVariables(now: TemplateEnvironment.DateComponents) -> [(String, TemplateValue)] {
        let environment = TemplateEnvironment(now: now)
        return [("date_string", .string(environment.strftime("%d %b %Y"))), ("datetime", .string(environment.strftime("%b %d %Y")))]
            + (hasThinkingSwitch ? [("enable_thinking", .bool(true))] : [])
    }

    /// The prompt for `messages`; with `addGenerationPrompt`, ending where the assistant's reply
    /// starts. A message's reasoning is its `reasoning_content` (and, in harmony, its `thinking`,
    /// as llama.cpp passes it); `thinking` sets `enable_thinking` (nil leaves it undefined, the
    /// template's default); `variables` are more of the template's variables (a server request's
    /// `chat_template_kwargs`). `now` is what `strftime_now` formats. `tools` are the functions
    /// offered (`tools`, undefined when none is); a message's tool calls and a tool message's
    /// `tool_call_id` and `name` reach the template as llama.cpp gives them: each call as
    /// `{type, function: {name, arguments}, id}`, its arguments an object when they parse as one.
    public func render(_ messages: [ChatMessage], addGenerationPrompt: Bool = true, thinking: Bool? = nil,
                       variables extra: [(String, TemplateValue)] = [], tools: [ToolFunction] = [],
                       now: TemplateEnvironment.DateComponents = .utc(secondsSince1970: Int(Date().timeIntervalSince1970))) throws(TemplateError) -> String {
        let messages: [TemplateValue] = messages.map { message in
            var fields: [(String, TemplateValue)] = [("role", .string(message.role)), ("content", .string(message.content))]
            if let reasoning = message.reasoning {
                fields.append(("reasoning_content", .string(reasoning)))
                if self.reasoning == .harmony { fields.append(("thinking", .string(reasoning))) }
            }
            if let name = message.name { fields.append(("name", .string(name))) }
            if let id = message.toolCallID { fields.append(("tool_call_id", .string(id))) }
            if !message.toolCalls.isEmpty {
                fields.append(("tool_calls", .list(message.toolCalls.map { call in
                    let arguments = (try? OrderedJSON(parsing: call.arguments)).flatMap { json -> TemplateValue? in
                        if case .object = json { TemplateValue(json) } else { nil }
                    } ?? .string(call.arguments)
                    return .dictionary(TemplateValue.Dictionary([
                        ("type", "function"),
                        ("function", .dictionary(TemplateValue.Dictionary([("name", .string(call.name)), ("arguments", arguments)]))),
                        ("id", .string(call.id)),
                    ]))
                })))
            }
            return .dictionary(TemplateValue.Dictionary(fields))
        }
        var variables: [String: TemplateValue] = [
            "messages": .list(messages),
            "add_generation_prompt": .bool(addGenerationPrompt),
            "bos_token": .string(bosToken),
            "eos_token": .string(eosToken),
            "tools": tools.isEmpty ? .none : .list(tools.map { tool in
                let parameters = (try? OrderedJSON(parsing: tool.parameters)).map(TemplateValue.init) ?? .string(tool.parameters)
                return .dictionary(TemplateValue.Dictionary([
                    ("type", "function"),
                    ("function", .dictionary(TemplateValue.Dictionary([
                        ("name", .string(tool.name)), ("description", .string(tool.description)), ("parameters", parameters),
                    ]))),
                ]))
            }),
        ]
        if let thinking { variables["enable_thinking"] = .bool(thinking) }
        for (name, value) in extra { variables[name] = value }
        return try template.render(variables, environment: TemplateEnvironment(now: now))
    }
}
