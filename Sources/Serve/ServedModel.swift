import ChatTemplates
import GGUF
import Inference
import Logging

/// A model `lumen serve` answers for: its weights, a pool of sessions (one request at a time on
/// each, the others waiting their turn), and the name requests give in `model`.
public final class ServedModel: Sendable {
    /// The name in `/v1/models` and in requests.
    public let name: String
    /// The weights.
    public let model: LanguageModel
    /// The sessions; requests wait their turn, first come, first served.
    let pool: SessionPool
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
        pool = SessionPool(model: model, instances: instances, contextLength: contextLength, threads: threads, requestsPerSession: 1)
        self.created = created
        self.pooling = pooling ?? Pooling.declared(by: model) ?? .mean
        chatTemplate = Result { () throws(ModelError) in try ChatTemplate(gguf: model.gguf, vocabulary: model.tokenizer.vocabulary) }
    }

    /// The context length of its sessions.
    var contextLength: Int { pool.contextLength }

    /// A session for request `id`, waiting its turn within `limits`' queue bounds, logging how
    /// many are ahead; a request cancelled while waiting leaves the queue, logged.
    func lease(limits: ServerLimits, logger: Logger, id: String, shutdown: ServerShutdown) async throws -> SessionLease {
        do {
            return try await pool.lease(queueLimit: limits.maximumQueued, waitLimit: limits.maximumWait) { ahead in
                logger.info("\(id) queued for a session, \(ahead) ahead")
            }
        } catch is CancellationError {
            logger.info("\(id) left the queue without running (\(shutdown.interruption))")
            throw CancellationError()
        }
    }

    /// When the file has no chat template: the note saying which built-in format its chats use.
    public var chatFormatNote: String? {
        guard case .success(let template) = chatTemplate else { return nil }
        return template.origin.fallbackNote(model: name, option: nil)
    }
}
