import Inference
import LumenLanguage

/// A conversation answered by a loaded model: one session of its pool keeps the earlier turns in
/// its cache, so each reply processes only the new tokens.
struct LocalChat: ChatEngine {
    /// The model.
    let model: LoadedModel
    /// The session whose cache holds the conversation.
    let session: ModelSession

    func reply(to conversation: Conversation, options: GenerationOptions, stop: StopSignal) throws(ModelError)
        -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>) {
        let prompt = try conversation.renderedPrompt()
        var options = options
        options.reusesCachedPrefix = true
        let tokens = conversation.promptTokens(session.model.tokenizer, text: prompt)
        return (prompt, session.generate(tokens: tokens, options: options, stop: stop))
    }

    func fork() throws(ModelError) -> any ChatEngine {
        LocalChat(model: model, session: try model.session())
    }
}
