import ChatTemplates
import GGUF
import Inference
import Logging
import LumenKit

/// A model `lumen serve` answers for: a `ModelContainer` (its weights, chat template, the hooks
/// every request's passes get and a pool of sessions, each decoding up to `parallel` requests
/// together, the others waiting their turn) and the name requests give in `model`.
public final class ServedModel: Sendable {
    /// The name in `/v1/models` and in requests.
    public let name: String
    /// The model's façade: its generations are the requests'.
    public let container: ModelContainer
    /// When it was loaded, seconds since 1970.
    let created: Int
    /// How `/v1/embeddings` pools a text's hidden states.
    public let pooling: Pooling
    /// The LoRA adapters its requests may apply (`--lora`), with the scales of those that name none.
    public let adapters: ServedAdapters

    /// Serves `model` as `name` with `instances` sessions of `parallel` sequences of
    /// `contextLength` (nil: the model's), keys and values in a cache of `cacheType`, and `threads`
    /// threads each; embeddings pooled by
    /// `pooling` (nil: as the file declares, else the mean); every forward pass changed by `hooks`;
    /// `adapters` (checked against `model`) for its requests to apply.
    ///
    /// - Throws: `ModelError` when a hook does not fit the model.
    public init(name: String, model: LanguageModel, instances: Int, parallel: Int = 1, contextLength: Int?, threads: Int, cacheType: KVCacheType = .f32,
                created: Int, pooling: Pooling? = nil,
                hooks: [any ForwardHook] = [], template: String? = nil, adapters: ServedAdapters = .none) throws(ModelError) {
        for hook in hooks { try hook.check(model) }
        self.name = name
        container = ModelContainer(model: model, settings: ModelContainer.Settings(
            contextLength: contextLength, threads: threads, sessions: instances, sequencesPerSession: parallel, requestsPerSession: parallel,
            chatTemplate: template, hooks: hooks, cacheType: cacheType))
        self.created = created
        self.pooling = pooling ?? Pooling.declared(by: model) ?? .mean
        self.adapters = adapters
    }

    /// The weights.
    public var model: LanguageModel { container.model }

    /// What changes every forward pass of its requests (control vectors), checked against the
    /// model when the server starts.
    public var hooks: [any ForwardHook] { container.hooks }

    /// The sessions; requests wait their turn, first come, first served.
    var pool: SessionPool { container.sessions }

    /// The context length of its sessions.
    var contextLength: Int { pool.contextLength }

    /// How many requests it serves at once, and the most memory each one's keys and values take.
    public var capacityNote: String {
        let sequences = pool.sequencesPerSession * pool.count
        let megabytes = Double(pool.bytesPerCachedToken * contextLength) / 1_048_576
        return "\(sequences) sequence\(sequences == 1 ? "" : "s") of \(contextLength) tokens at once, "
            + "each up to \(String(format: "%.0f", megabytes)) MB of keys and values as its context fills"
    }

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

    /// What its requests' batches decoded: how many tokens in how many passes, the most together.
    public var batchNote: String {
        let statistics = pool.batchStatistics
        return "\(statistics.tokens) tokens decoded in \(statistics.passes) passes, up to \(statistics.largest) sequences together; "
            + "\(statistics.promptTokens) prompt tokens read"
    }

    /// When the file has no chat template: the note saying which built-in format its chats use.
    public var chatFormatNote: String? {
        guard let template = try? container.chatTemplate() else { return nil }
        return template.origin.fallbackNote(model: name, option: nil)
    }
}
