import ChatTemplates
import GGUF
import GenerationTypes
import Inference
import LumenLanguage

/// What produces a conversation's replies: a local session that renders the chat template and
/// keeps the earlier turns cached (`LocalChat`), or a server that renders them itself
/// (`RemoteChat`).
protocol ChatEngine: Sendable {
    /// Starts the next reply to `conversation`, whose last message is the user's. Returns the
    /// prompt text the model is given when it is rendered here (nil when a server renders it).
    func reply(to conversation: Conversation, options: GenerationOptions, stop: StopSignal) async throws
        -> (renderedPrompt: String?, events: AsyncThrowingStream<TokenEvent, any Error>)
    /// An engine for a copy of the conversation that goes on separately, starting from what the
    /// original has computed.
    func fork() async throws -> any ChatEngine
}
