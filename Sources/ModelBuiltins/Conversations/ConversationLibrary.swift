import ChatTemplates
import Evaluation
import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import Widgets

/// Conversations: `conversation` starts one with a loaded or served model, `say` adds a turn,
/// `reset` and `fork`; `chatWidget` is one in a notebook form.
final class ConversationLibrary: LumenLibrary {
    let builtins: [Builtin] = [conversation, say, reset, fork, chatWidget]

    /// The positional argument `conversation`.
    static func chat(_ arguments: inout Arguments) throws(LumenError) -> ChatSession {
        try ModelLibrary.hostObject(&arguments, "conversation", "a conversation (from conversation(model))")
    }

    static let conversation = Builtin(
        name: "conversation",
        signature: "conversation(_ model, system: String? = nil, template: String? = nil, thinking: Bool? = nil) -> Conversation",
        summary: "Starts a conversation with the model, rendered by its chat template (or template:, a Jinja template; the built-in format of its architecture (Gemma, Llama 3, Phi-3, else ChatML) when the model has none). Each say() reuses the cached earlier turns. A reply's reasoning (Qwen's <think>, gpt-oss's analysis channel, Gemma 4's thought channel) is shown dimmed and kept apart: reply.reasoning, reply.text the answer. thinking: true or false switches it on or off where the template can (enable_thinking); nil keeps the template's default."
    ) { arguments, context in
        let model = try ModelLibrary.generativeModel(&arguments)
        let system = try arguments.labelledString("system")
        let template = try arguments.labelledString("template")
        let thinking = try arguments.labelledBool("thinking")
        try arguments.finish()
        let chat = try await ModelLibrary.modelWork(at: context.location) {
            try await model.conversation(system: system, template: template) { context.output.stream(.stderr, $0) }
        }
        if let thinking {
            guard chat.conversation.template?.hasThinkingSwitch == true else {
                throw LumenError(.value, "thinking: needs a chat template that reads enable_thinking; \(model.name)'s does not", at: context.location)
            }
            chat.update { $0.thinking = thinking }
        }
        return .host(chat)
    }

    static let say = Builtin(
        name: "say",
        signature: "say(_ conversation, _ message: String, maxTokens: 128, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.0, repeatLastN: 64, frequencyPenalty: 0, presencePenalty: 0, logitBias: [Int: Double] = [:], seed: nil, stop: [String] = [], timeout: Double? = nil, stopButton: false) -> Generation",
        summary: "Adds a user message and generates the reply live, as generate does; the reply joins the conversation (kept and marked partial when interrupted). stopButton: true shows a Stop button that ends this reply alone."
    ) { arguments, context in
        let chat = try chat(&arguments)
        let message = try arguments.string(try arguments.requirePositional("message"), "message")
        let options = try ModelLibrary.generationOptions(&arguments, defaults: context.generationDefaults)
        let timeout = try arguments.labelledNumber("timeout")
        let stopButton = try arguments.labelledBool("stopButton") ?? false
        try arguments.finish()
        let generation = try await reply(in: chat, to: message, options: options, timeout: timeout, stopButton: stopButton, context: context)
        try Task.checkCancellation()
        return .host(generation)
    }

    /// Adds `message` to `chat` and streams the reply to `context`'s output; the reply joins the
    /// conversation, marked partial when it was stopped.
    static func reply(in chat: ChatSession, to message: String, options: GenerationOptions, timeout: Double?, stopButton: Bool,
                      context: Builtin.Context) async throws -> Generation {
        var turn = chat.conversation
        turn.append(ChatMessage(role: "user", content: message))
        let generation = try await ModelLibrary.streamGeneration(prompt: message, options: options, timeout: timeout, stopButton: stopButton,
                                                    record: RunDraft(entry: "say", model: chat.model, messages: turn.messages),
                                                    reasoning: turn.template?.reasoning, context: context) { stop in
            try await chat.engine.reply(to: turn, options: options, stop: stop)
        }
        turn.append(ChatMessage(role: "assistant", content: generation.text, isPartial: generation.interrupted || generation.stats.finishReason == .timeout,
                                reasoning: generation.reasoning))
        chat.update { $0 = turn }
        return generation
    }

    static let chatWidget = Builtin(
        name: "chatWidget",
        signature: "chatWidget(_ conversation, maxTokens: 128, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.0, repeatLastN: 64, frequencyPenalty: 0, presencePenalty: 0, logitBias: [Int: Double] = [:], seed: nil, stop: [String] = [])",
        summary: "The conversation as a form in Jupyter: its transcript above a message box and a Send button; each message is said with these options, the reply streaming into the transcript with a Stop button beside it. Where widgets do not show (the terminal, lumen run) the form is only text: use say() there."
    ) { arguments, context in
        let chat = try chat(&arguments)
        let options = try ModelLibrary.generationOptions(&arguments, defaults: context.generationDefaults)
        try arguments.finish()
        return try await ChatForm.make(context: context) { message, context in
            _ = try await reply(in: chat, to: message, options: options, timeout: nil, stopButton: true, context: context)
        }
    }

    static let reset = Builtin(
        name: "reset",
        signature: "reset(_ conversation)",
        summary: "Forgets every message but the system message."
    ) { arguments, _ in
        let chat = try chat(&arguments)
        try arguments.finish()
        chat.update { $0.reset() }
        return .null
    }

    static let fork = Builtin(
        name: "fork",
        signature: "fork(_ conversation) -> Conversation",
        summary: "A copy of the conversation that goes on separately (on the model's next session), starting from the original's cache: its first reply reuses the earlier turns."
    ) { arguments, context in
        let chat = try chat(&arguments)
        try arguments.finish()
        let engine = try await ModelLibrary.modelWork(at: context.location) { try await chat.engine.fork() }
        return .host(ChatSession(model: chat.model, engine: engine, conversation: chat.conversation))
    }
}
