import ChatTemplates

/// A generation request's prompt as the model reads it, and how the answer's reasoning is told
/// from its reply.
struct ServedPrompt: Sendable {
    /// The prompt's tokens.
    var tokens: [Int32]
    /// The text a chat template rendered (nil for a completion's prompt).
    var rendered: String?
    /// How the model's reasoning is marked (nil: the format marks none).
    var reasoning: ReasoningSyntax?
    /// Whether the reasoning is left in the reply (`reasoning_format: none`), not split from it.
    var inlineReasoning = false
    /// The special tokens the output shows: the reasoning's markers.
    var shownTokens: Set<Int32> = []

    /// A stream that tells the answer's reasoning from its reply.
    func replyStream() -> ReasoningStream {
        ReasoningStream(syntax: reasoning, prompt: rendered ?? "", inline: inlineReasoning)
    }
}
