import ChatTemplates
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage

/// A conversation answered by a loaded model: it keeps to one session of the pool, whose cache
/// holds the earlier turns, so each reply processes only the new tokens.
struct LocalChat: ChatEngine {
    /// The model.
    let model: LoadedModel
    /// The pool's session whose cache holds the conversation: each reply prefers it.
    let sessionIndex: Int
    /// For a fork, its parent's cache when it forked: copied into the session when that holds
    /// less of the conversation, so a fork's first turn reuses the parent's.
    var inherited: ModelSession.CachedPrefix?

    func reply(to conversation: Conversation, options: GenerationOptions, stop: StopSignal) async throws
        -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>) {
        let prompt = try conversation.renderedPrompt()
        var options = options
        options.reusesCachedPrefix = true
        let container = try model.container()
        let tokenizer = container.model.tokenizer
        let tokens = conversation.promptTokens(tokenizer, text: prompt)
        // The markers of the reasoning (and of tool calls, when tools are offered) are shown, so
        // that they can be told from the reply.
        let vocabulary = tokenizer.vocabulary
        options.shownTokens.formUnion(conversation.template?.reasoning?.shownTokenIDs(in: vocabulary) ?? [])
        if !conversation.tools.isEmpty, let syntax = conversation.template?.toolCalls {
            options.shownTokens.formUnion(syntax.shownTokenIDs(in: vocabulary))
        }
        return (prompt, container.generate(tokens: tokens, options: options, stop: stop, startingFrom: inherited, preferring: sessionIndex))
    }

    /// The copy keeps to the pool's next session, starting from this one's cache.
    func fork() async throws -> any ChatEngine {
        let parent = try await model.lease(preferring: sessionIndex)
        let cached = await parent.session.cachedPrefix()
        parent.release()
        return LocalChat(model: model, sessionIndex: (sessionIndex + 1) % model.instances, inherited: cached)
    }
}
