import ChatTemplates
import Evaluation
import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import OpenAIAPI
import OrderedJSON
import Widgets

/// Conversations: `conversation` starts one with a loaded or served model, `say` adds a turn
/// (offering tools the model may call, and running those given as Lumen functions),
/// `toolResult` answers a call, `reset` and `fork`; `chatWidget` is one in a notebook form.
final class ConversationLibrary: LumenLibrary {
    let builtins: [Builtin] = [conversation, say, toolResult, reset, fork, chatWidget]

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
        signature: "say(_ conversation, _ message: String? = nil, tools: [Dictionary] = [], toolChoice: \"auto\", maxToolRounds: 8, maxTokens: 128, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.0, repeatLastN: 64, frequencyPenalty: 0, presencePenalty: 0, logitBias: [Int: Double] = [:], seed: nil, stop: [String] = [], timeout: Double? = nil, stopButton: false) -> Generation",
        summary: "Adds a user message and generates the reply live, as generate does; the reply joins the conversation (kept and marked partial when interrupted). stopButton: true shows a Stop button that ends this reply alone. tools: functions the model may call, each a Dictionary with name, description and parameters (a JSON Schema), as OpenAI's API takes them; the reply's toolCalls are its calls (name, arguments as a Dictionary, id), in the syntax of the model's chat template (Qwen's and Hermes' <tool_call> JSON, Qwen 3.5's XML parameters, Llama 3's JSON, gpt-oss's harmony, Gemma 4's). A tool with call: (a Lumen function) is run: each call of it gets the arguments, its result goes back to the model, which replies again, up to maxToolRounds times. toolChoice: \"auto\", \"none\", \"required\" or a function's name; the last two constrain the call to the function's schema. Without a message, the model replies to the tools' results that toolResult added."
    ) { arguments, context in
        let chat = try chat(&arguments)
        let message = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.string(argument, "message") }
        let tools = try ToolSet(&arguments, template: chat.conversation.template, location: context.location)
        var options = try ModelLibrary.generationOptions(&arguments, defaults: context.generationDefaults)
        let timeout = try arguments.labelledNumber("timeout")
        let stopButton = try arguments.labelledBool("stopButton") ?? false
        try arguments.finish()
        if let tools { options.constraint = tools.constraint }
        let generation = try await reply(in: chat, to: message, options: options, tools: tools, timeout: timeout, stopButton: stopButton, context: context)
        try Task.checkCancellation()
        return .host(generation)
    }

    static let toolResult = Builtin(
        name: "toolResult",
        signature: "toolResult(_ conversation, _ call: Dictionary, _ result)",
        summary: "Answers a tool call of the last reply (an element of its toolCalls) with result (text, or a value sent as its JSON); say(conversation) then lets the model reply to it."
    ) { arguments, context in
        let chat = try chat(&arguments)
        let (call, _) = try arguments.requirePositional("call")
        let (result, _) = try arguments.requirePositional("result")
        try arguments.finish()
        guard case .dictionary(let fields) = call, case .string(let id)? = fields[.string("id")], case .string(let name)? = fields[.string("name")] else {
            throw LumenError(.type, "toolResult: call must be one of a reply's toolCalls (a Dictionary with its id and name)", at: context.location)
        }
        let answered = chat.conversation.messages.last { $0.role == "assistant" }?.toolCalls.contains { $0.id == id } ?? false
        guard answered else { throw LumenError(.value, "toolResult: the last reply made no call with id \(id)", at: context.location) }
        let text = try content(of: result, at: context.location)
        chat.update { $0.append(ChatMessage(role: "tool", content: text, toolCallID: id, name: name)) }
        return .null
    }

    /// A tool's result as the message that carries it: text as it is, any other value as its JSON.
    static func content(of result: Value, at location: SourceLocation) throws(LumenError) -> String {
        if case .string(let text) = result { return text }
        guard let json = result.jsonText else { throw LumenError(.value, "a tool's result must be text or have a JSON form, got \(result.typeName)", at: location) }
        return json
    }

    /// A tool call as a value: its id, name, and arguments (a Dictionary when they are a JSON
    /// object, else their text).
    static func value(_ call: ToolCall) -> Value {
        var entry = LumenDictionary()
        entry[.string("id")] = .string(call.id)
        entry[.string("name")] = .string(call.name)
        let parsed = (try? OrderedJSON(parsing: call.arguments)).map(JSONValues.value(of:))
        entry[.string("arguments")] = if case .dictionary(let arguments)? = parsed { .dictionary(arguments) } else { .string(call.arguments) }
        return .dictionary(entry)
    }

    /// Adds `message` (when there is one; else the last message must be a tool's result) to
    /// `chat` and streams the reply to `context`'s output; the reply joins the conversation,
    /// marked partial when it was stopped. Calls of `tools` that have a Lumen function are run
    /// and the model replies to their results, up to the tools' round limit.
    static func reply(in chat: ChatSession, to message: String?, options: GenerationOptions, tools: ToolSet? = nil, timeout: Double?, stopButton: Bool,
                      context: Builtin.Context) async throws -> Generation {
        var turn = chat.conversation
        if let message {
            turn.append(ChatMessage(role: "user", content: message))
        } else if turn.messages.last?.role != "tool" {
            throw LumenError(.value, "say needs a message, unless the last message is a tool's result (toolResult)", at: context.location)
        }
        turn.tools = tools?.request.functions ?? []
        var rounds = 0
        while true {
            let current = turn
            let prompt = current.messages.last?.content ?? ""
            let generation = try await ModelLibrary.streamGeneration(prompt: prompt, options: options, timeout: timeout, stopButton: stopButton,
                                                                     record: RunDraft(entry: "say", model: chat.model, messages: current.messages),
                                                                     reasoning: current.template?.reasoning, toolCalls: tools?.callStream(),
                                                                     context: context) { stop in
                try await chat.engine.reply(to: current, options: options, stop: stop)
            }
            turn.append(ChatMessage(role: "assistant", content: generation.text, isPartial: generation.interrupted || generation.stats.finishReason == .timeout,
                                    reasoning: generation.reasoning, toolCalls: generation.toolCalls))
            chat.update { $0 = turn }
            guard let tools, !generation.toolCalls.isEmpty, !generation.interrupted, rounds < tools.maxRounds,
                  let functions = tools.functions(for: generation.toolCalls) else { return generation }
            for (call, function) in zip(generation.toolCalls, functions) {
                try Task.checkCancellation()
                guard case .dictionary(let arguments)? = (try? OrderedJSON(parsing: call.arguments)).map(JSONValues.value(of:)) else {
                    throw LumenError(.value, "the model called \(call.name) with arguments that are not a JSON object: \(call.arguments)", at: context.location)
                }
                let result = try content(of: try await context.call(function, [.dictionary(arguments)]), at: context.location)
                context.output.stream(.stdout, "← \(call.name): \(result)\n")
                turn.append(ChatMessage(role: "tool", content: result, toolCallID: call.id, name: call.name))
            }
            chat.update { $0 = turn }
            rounds += 1
        }
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
