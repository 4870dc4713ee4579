import ChatTemplates
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import Remote

/// A conversation answered by a served model: each reply sends the whole conversation to
/// `/chat/completions`, and the server renders it with its own template.
struct RemoteChat: ChatEngine {
    /// The model.
    let model: RemoteModel

    func reply(to conversation: Conversation, options: GenerationOptions, stop: StopSignal) async throws
        -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>) {
        (nil, model.chat(conversation.messages, options: options, stop: stop))
    }

    func fork() async throws -> any ChatEngine { self }
}
