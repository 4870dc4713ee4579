import GGUF
import GenerationTypes
import Tokenizers
/// A conversation with a model: its messages and the chat template that turns them into the
/// prompt of the next reply (none when a server renders them). Values, so a conversation can be
/// copied (forked) freely; the `ModelSession` that answers keeps the earlier turns in its cache,
/// so each turn processes only its new tokens.
public struct Conversation: Sendable {
    /// The template that renders the messages; nil when the server that answers renders them.
    public let template: ChatTemplate?
    /// The messages so far, system message first.
    public private(set) var messages: [ChatMessage]
    /// The system message it started with.
    public let system: String?
    /// Whether the model thinks before it replies, for a template with the switch
    /// (`enable_thinking`); nil: the template's default.
    public var thinking: Bool?
    /// The functions offered to the next reply as tools (rendered by the template).
    public var tools: [ToolFunction] = []

    /// A conversation with the model whose file and vocabulary are `gguf` and `vocabulary`,
    /// starting with `system` (if any), rendered by `template` (default: the file's, else the built-in format of its architecture).
    public init(gguf: GGUFFile, vocabulary: Vocabulary, system: String? = nil, template: String? = nil) throws(ModelError) {
        self.template = try ChatTemplate(gguf: gguf, vocabulary: vocabulary, override: template)
        self.system = system
        messages = system.map { [ChatMessage(role: "system", content: $0)] } ?? []
    }

    /// A conversation rendered by `template`, starting with `system` (if any).
    public init(template: ChatTemplate, system: String?) {
        self.template = template
        self.system = system
        messages = system.map { [ChatMessage(role: "system", content: $0)] } ?? []
    }

    /// A conversation whose messages a server renders with its own template (a remote model's).
    public init(system: String?) {
        template = nil
        self.system = system
        messages = system.map { [ChatMessage(role: "system", content: $0)] } ?? []
    }

    /// Adds a message.
    public mutating func append(_ message: ChatMessage) {
        messages.append(message)
    }

    /// Back to the system message alone.
    public mutating func reset() {
        messages = system.map { [ChatMessage(role: "system", content: $0)] } ?? []
    }

    /// The prompt text for the next reply: the messages rendered with the generation prompt.
    public func renderedPrompt() throws(ModelError) -> String {
        guard let template else {
            throw ModelError(file: "chat template", field: "template", reason: "the server renders this conversation with its own template")
        }
        do {
            return try template.render(messages, addGenerationPrompt: true, thinking: thinking, tools: tools)
        } catch {
            throw ModelError(file: "chat template", field: error.kind, reason: error.description)
        }
    }

    /// The prompt's tokens: special tokens written by the template are parsed, and BOS is added
    /// as the vocabulary says unless the template already wrote it.
    public func promptTokens(_ tokenizer: Tokenizer, text: String) -> [Int32] {
        Self.promptTokens(tokenizer, text: text)
    }

    /// The tokens of a prompt rendered by a chat template, as `promptTokens` gives them.
    public static func promptTokens(_ tokenizer: Tokenizer, text: String) -> [Int32] {
        var tokens = tokenizer.encode(text, addSpecial: true, parseSpecial: true)
        if tokens.count >= 2, let bos = tokenizer.vocabulary.bos, tokenizer.vocabulary.addsBOS, tokens[0] == bos, tokens[1] == bos {
            tokens.removeFirst()
        }
        return tokens
    }
}
