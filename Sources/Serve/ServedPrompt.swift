import ChatTemplates
import GenerationTypes

/// A generation request's prompt as the model reads it, and how the answer's reasoning and tool
/// calls are told from its reply.
struct ServedPrompt: Sendable {
    /// The prompt's tokens.
    var tokens: [Int32]
    /// The text a chat template rendered (nil for a completion's prompt).
    var rendered: String?
    /// How the model's reasoning is marked (nil: the format marks none).
    var reasoning: ReasoningSyntax?
    /// Whether the reasoning is left in the reply (`reasoning_format: none`), not split from it.
    var inlineReasoning = false
    /// The special tokens the output shows: the reasoning's and tool calls' markers.
    var shownTokens: Set<Int32> = []
    /// How the reply writes tool calls, when the request offered tools it may call.
    var toolCalls: ToolCallSyntax?
    /// The functions offered.
    var offeredTools: [ToolFunction] = []

    /// A stream that tells the answer's reasoning from its reply (a tool call ends the reasoning).
    func replyStream() -> ReasoningStream {
        ReasoningStream(syntax: reasoning, prompt: rendered ?? "", inline: inlineReasoning, endsBefore: toolCalls?.starts ?? [])
    }

    /// A stream that tells the reply's tool calls from its text, each call with an id of its own.
    func toolCallStream() -> ToolCallStream {
        ToolCallStream(syntax: toolCalls, offered: offeredTools, makeID: ToolCallStream.callID)
    }
}
