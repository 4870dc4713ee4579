import ChatTemplates
import Foundation
import GenerationTypes
import Grammars
import Inference
import Jinja
import OpenAIAPI

/// A generation request the server answers (`/v1/completions`, `/v1/chat/completions`): its
/// fields, its prompt's tokens, and the shape of its answer, so one handler serves both.
protocol ServedGenerationRequest: Decodable, Sendable {
    /// A whole answer or one streamed chunk.
    associatedtype Answer: Encodable & Sendable & ChoiceList
    /// The fields the request may carry.
    static var fieldNames: Set<String> { get }
    /// The model asked for.
    var model: String? { get }
    /// Sampling and stopping.
    var sampling: SamplingFields { get }
    /// Steering inside the model, by the names the server loaded.
    var steering: SteeringFields { get }
    /// The most tokens to generate.
    var tokenLimit: Int? { get }
    /// Whether to stream.
    var stream: Bool? { get }
    /// Whether a stream ends with a usage chunk.
    var streamOptions: StreamOptions? { get }
    /// Choices asked for.
    var n: Int? { get }
    /// Alternatives per token to report; nil: no log-probabilities.
    var alternatives: Int? { get }
    /// Whether the answer starts with the prompt, scored (`echo`).
    var echoesPrompt: Bool { get }
    /// The prompt as the run log keeps it: a completion's prompt, a chat's last message.
    var loggedPrompt: String { get }
    /// A chat's messages, for the run log.
    var loggedMessages: [ChatMessage]? { get }
    /// The field that holds the prompt, named in errors about it.
    static var promptField: String { get }
    /// The prompt for `model`: its tokens, and how the answer's reasoning and tool calls are told
    /// from its reply.
    func prompt(for model: ServedModel) throws(ServerError) -> ServedPrompt
    /// Reads the fields of `body` that this type's decoder leaves (those read as ordered JSON).
    mutating func readOrderedFields(from body: Data) throws(FieldFailure)
    /// The tools the request offers, when it offers some.
    var tools: ToolFields.Request? { get }
    /// An answer of choice `index` (`chunk`: one piece of a stream, the choice's first when
    /// `first`) with `text` (and the model's `reasoning` before it, when it is told apart), the
    /// tool calls it makes (in a stream, those the chunk adds, the first numbered `firstCall`),
    /// the tokens' log-probabilities when asked for, and the finish reason and usage when known.
    static func answer(id: String, created: Int, model: String, index: Int, chunk: Bool, first: Bool, text: String, reasoning: String?,
                       toolCalls: [ToolCall], firstCall: Int, logprobs: [TokenLogprob]?, finishReason: String?, usage: Usage?) -> Answer
    /// The last chunk of a stream that asked for usage: no choices, the token counts.
    static func usageChunk(id: String, created: Int, model: String, usage: Usage) -> Answer
}

extension ServedGenerationRequest {
    /// The grammar that makes the reply call a tool, when `tool_choice` asks for a call: the
    /// calls in the syntax of `prompt`, their arguments valid against the function's schema;
    /// several when `parallel_tool_calls` allows.
    func toolCallConstraint(for prompt: ServedPrompt) throws(ServerError) -> OutputConstraint? {
        guard let tools, let syntax = prompt.toolCalls else { return nil }
        do {
            return try syntax.constraint(calling: tools.functions, choice: tools.choice, parallel: tools.parallel)
        } catch {
            throw .invalid("\(error)", param: "tools")
        }
    }
}

extension CompletionRequest: ServedGenerationRequest {
    static let promptField = "prompt"
    var tokenLimit: Int? { sampling.maxTokens }
    var alternatives: Int? { logprobs }
    var loggedPrompt: String { prompt }
    var echoesPrompt: Bool { echo == true }
    var loggedMessages: [ChatMessage]? { nil }
    var tools: ToolFields.Request? { nil }

    func prompt(for model: ServedModel) throws(ServerError) -> ServedPrompt {
        ServedPrompt(tokens: model.model.tokenizer.encode(prompt))
    }

    func readOrderedFields(from body: Data) throws(FieldFailure) {}

    static func answer(id: String, created: Int, model: String, index: Int, chunk: Bool, first: Bool, text: String, reasoning: String?,
                       toolCalls: [ToolCall], firstCall: Int, logprobs: [TokenLogprob]?, finishReason: String?, usage: Usage?) -> Completion {
        let legacy = logprobs.map { entries in
            var offsets: [Int] = []
            var offset = 0
            for entry in entries {
                offsets.append(offset)
                offset += entry.token.count
            }
            // A NaN log-probability is the first prompt token's, which has none: JSON null.
            return CompletionLogprobs(tokens: entries.map(\.token), tokenLogprobs: entries.map { $0.logprob.isNaN ? nil : $0.logprob },
                                      topLogprobs: entries.map { entry in Dictionary(entry.topLogprobs.map { ($0.token, $0.logprob) }) { first, _ in first } },
                                      textOffset: offsets)
        }
        return Completion(id: id, created: created, model: model, choices: [CompletionChoice(index: index, text: text, logprobs: legacy, finishReason: finishReason)],
                          usage: usage)
    }

    static func usageChunk(id: String, created: Int, model: String, usage: Usage) -> Completion {
        Completion(id: id, created: created, model: model, choices: [], usage: usage)
    }
}

extension ChatCompletionRequest: ServedGenerationRequest {
    static let promptField = "messages"
    /// The roles a message may have, as OpenAI's API takes them.
    static let roles: Set<String> = ["system", "developer", "user", "assistant", "tool"]
    var alternatives: Int? { logprobs == true ? (topLogprobs ?? 0) : nil }
    var loggedPrompt: String { messages.last?.content ?? "" }
    var echoesPrompt: Bool { false }
    var loggedMessages: [ChatMessage]? { chatMessages }

    /// The messages as the chat template takes them, with their reasoning and tool calls.
    private var chatMessages: [ChatMessage] {
        messages.map { message in
            ChatMessage(role: message.role, content: message.content, reasoning: message.reasoningContent,
                        toolCalls: (message.toolCalls ?? []).map { ToolCall(id: $0.id ?? "", name: $0.function.name ?? "", arguments: $0.function.arguments ?? "") },
                        toolCallID: message.toolCallID, name: message.name)
        }
    }

    mutating func readOrderedFields(from body: Data) throws(FieldFailure) {
        tools = try ToolFields.tools(in: body)
    }

    func prompt(for model: ServedModel) throws(ServerError) -> ServedPrompt {
        guard !messages.isEmpty else { throw .invalid("messages must not be empty", param: "messages") }
        if let (index, message) = messages.enumerated().first(where: { !Self.roles.contains($0.element.role) }) {
            throw .invalid("messages[\(index)].role must be one of \(Self.roles.sorted().joined(separator: ", ")), got \(message.role.debugDescription)",
                           param: "messages")
        }
        let template: ChatTemplate
        do {
            template = try model.container.chatTemplate()
        } catch {
            throw .failed("the model's chat template cannot be used: \(error)")
        }
        let splits: Bool
        switch reasoningFormat ?? "auto" {
        case "none": splits = false
        case "auto", "deepseek": splits = true
        case let other: throw .invalid("reasoning_format must be none, auto or deepseek, got '\(other)'", param: "reasoning_format")
        }
        // llama-server's variables first, so the request's own override them.
        let now = TemplateEnvironment.DateComponents.utc(secondsSince1970: Int(Date().timeIntervalSince1970))
        let variables = template.llamaServerVariables(now: now) + (chatTemplateKwargs ?? [:]).sorted { $0.key < $1.key }.map { name, value -> (String, TemplateValue) in
            switch value {
            case .bool(let flag): (name, .bool(flag))
            case .integer(let number): (name, .int(number))
            case .number(let number): (name, .float(number))
            case .string(let text): (name, .string(text))
            }
        }
        let text: String
        do {
            text = try template.render(chatMessages, addGenerationPrompt: true, variables: variables, tools: tools?.functions ?? [], now: now)
        } catch {
            throw .invalid("the chat template failed on these messages: \(error)", param: "messages")
        }
        var prompt = ServedPrompt(tokens: Conversation.promptTokens(model.model.tokenizer, text: text), rendered: text)
        if let syntax = template.reasoning {
            prompt.reasoning = syntax
            prompt.inlineReasoning = !splits
            prompt.shownTokens = syntax.shownTokenIDs(in: model.model.tokenizer.vocabulary)
        }
        if let tools, tools.choice != .none {
            guard let syntax = template.toolCalls else {
                guard tools.choice == .auto else {
                    throw .invalid("tool_choice asks for a tool call, but the model's chat template describes no tools (--chat-template-file gives one that does)",
                                   param: "tool_choice")
                }
                return prompt
            }
            prompt.toolCalls = syntax
            prompt.offeredTools = tools.functions
            prompt.shownTokens.formUnion(syntax.shownTokenIDs(in: model.model.tokenizer.vocabulary))
        }
        return prompt
    }

    static func answer(id: String, created: Int, model: String, index: Int, chunk: Bool, first: Bool, text: String, reasoning: String?,
                       toolCalls: [ToolCall], firstCall: Int, logprobs: [TokenLogprob]?, finishReason: String?, usage: Usage?) -> ChatCompletion {
        let calls = toolCalls.isEmpty ? nil : toolCalls.enumerated().map { offset, call in
            WireToolCall(index: chunk ? firstCall + offset : nil, id: call.id, function: .init(name: call.name, arguments: call.arguments))
        }
        let choice = chunk
            ? ChatChoice(index: index, delta: ChatDelta(role: first ? "assistant" : nil, content: text.isEmpty && (reasoning != nil || calls != nil) ? nil : text,
                                                        reasoningContent: reasoning, toolCalls: calls),
                         logprobs: logprobs.map { ChatLogprobs(content: $0) }, finishReason: finishReason)
            : ChatChoice(index: index, message: WireChatMessage(role: "assistant", content: text, reasoningContent: reasoning, toolCalls: calls),
                         logprobs: logprobs.map { ChatLogprobs(content: $0) }, finishReason: finishReason)
        return ChatCompletion(id: id, chunk: chunk, created: created, model: model, choices: [choice], usage: usage)
    }

    static func usageChunk(id: String, created: Int, model: String, usage: Usage) -> ChatCompletion {
        ChatCompletion(id: id, chunk: true, created: created, model: model, choices: [], usage: usage)
    }
}
