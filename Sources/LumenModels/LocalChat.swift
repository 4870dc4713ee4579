import GGUF
import GenerationTypes
import Inference
import LumenLanguage

/// A conversation answered by a loaded model: one session of its pool keeps the earlier turns in
/// its cache, so each reply processes only the new tokens.
struct LocalChat: ChatEngine {
    /// The model.
    let model: LoadedModel
    /// The session whose cache holds the conversation.
    let session: ModelSession
    /// For a fork, its parent's cache when it forked: copied into `session` when that holds less
    /// of the conversation, so a fork's first turn reuses the parent's.
    var inherited: ModelSession.CachedPrefix?

    func reply(to conversation: Conversation, options: GenerationOptions, stop: StopSignal) throws(ModelError)
        -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>) {
        let prompt = try conversation.renderedPrompt()
        var options = options
        options.reusesCachedPrefix = true
        let tokens = conversation.promptTokens(session.model.tokenizer, text: prompt)
        return (prompt, session.generate(tokens: tokens, options: options, stop: stop, startingFrom: inherited))
    }

    func fork() async throws(ModelError) -> any ChatEngine {
        LocalChat(model: model, session: try model.session(), inherited: await session.cachedPrefix())
    }
}
