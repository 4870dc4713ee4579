import Executors
import GGUF
import Inference

/// A model `lumen serve` answers for: its weights, a pool of sessions (one request at a time on
/// each), and the name requests give in `model`.
public final class ServedModel: Sendable {
    /// The name in `/v1/models` and in requests.
    public let name: String
    /// The weights.
    public let model: LanguageModel
    /// The sessions.
    let sessions: [ModelSession]
    /// Which sessions are busy; requests wait their turn, first come, first served.
    let pool: FairPool
    /// When it was loaded, seconds since 1970.
    let created: Int
    /// The model's chat template, parsed once (or why it cannot be used).
    let chatTemplate: Result<ChatTemplate, ModelError>
    /// How `/v1/embeddings` pools a text's hidden states.
    public let pooling: Pooling
    /// What changes every forward pass of its requests (control vectors), checked against the
    /// model when the server starts.
    public let hooks: [any ForwardHook]

    /// Serves `model` as `name` with `instances` sessions of `contextLength` (nil: the model's)
    /// and `threads` threads each; embeddings pooled by `pooling` (nil: as the file declares,
    /// else the mean); every forward pass changed by `hooks`.
    ///
    /// - Throws: `ModelError` when a hook does not fit the model.
    public init(name: String, model: LanguageModel, instances: Int, contextLength: Int?, threads: Int, created: Int, pooling: Pooling? = nil,
                hooks: [any ForwardHook] = []) throws(ModelError) {
        for hook in hooks { try hook.check(model) }
        self.hooks = hooks
        self.name = name
        self.model = model
        sessions = (0..<max(1, instances)).map { _ in ModelSession(model: model, contextLength: contextLength, threads: threads) }
        pool = FairPool(count: sessions.count, limit: 1)
        self.created = created
        self.pooling = pooling ?? Pooling.declared(by: model) ?? .mean
        chatTemplate = Result { () throws(ModelError) in try ChatTemplate(gguf: model.gguf, vocabulary: model.tokenizer.vocabulary) }
    }

    /// The context length of its sessions.
    var contextLength: Int { sessions[0].contextLength }

    /// When the file has no chat template: the note saying which built-in format its chats use.
    public var chatFormatNote: String? {
        guard case .success(let template) = chatTemplate else { return nil }
        return template.origin.fallbackNote(model: name, option: nil)
    }
}
