import Foundation
import GGUF
import GenerationTypes
import Jinja
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
        template = try Template(source)
    }

    /// The prompt for `messages`; with `addGenerationPrompt`, ending where the assistant's reply
    /// starts. A message's reasoning is its `reasoning_content` (and, in harmony, its `thinking`,
    /// as llama.cpp passes it); `thinking` sets `enable_thinking` (nil leaves it undefined, the
    /// template's default); `variables` are more of the template's variables (a server request's
    /// `chat_template_kwargs`). `now` is what `strftime_now` formats.
    public func render(_ messages: [ChatMessage], addGenerationPrompt: Bool = true, thinking: Bool? = nil,
                       variables extra: [(String, TemplateValue)] = [],
                       now: TemplateEnvironment.DateComponents = .utc(secondsSince1970: Int(Date().timeIntervalSince1970))) throws(TemplateError) -> String {
        let messages: [TemplateValue] = messages.map { message in
            var fields: [(String, TemplateValue)] = [("role", .string(message.role)), ("content", .string(message.content))]
            if let reasoning = message.reasoning {
                fields.append(("reasoning_content", .string(reasoning)))
                if self.reasoning == .harmony { fields.append(("thinking", .string(reasoning))) }
            }
            return .dictionary(TemplateValue.Dictionary(fields))
        }
        var variables: [String: TemplateValue] = [
            "messages": .list(messages),
            "add_generation_prompt": .bool(addGenerationPrompt),
            "bos_token": .string(bosToken),
            "eos_token": .string(eosToken),
            "tools": .none,
        ]
        if let thinking { variables["enable_thinking"] = .bool(thinking) }
        for (name, value) in extra { variables[name] = value }
        return try template.render(variables, environment: TemplateEnvironment(now: now))
    }
}
