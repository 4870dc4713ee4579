import Display
import Evaluation
import Foundation
import GGUF
import Inference
import LumenKit
import LumenLanguage
import Synchronization
import Tokenizers

/// A model loaded in a session: a `ModelContainer` (the library's façade) of its weights (shared
/// with every other load of the same file) and a pool of `ModelSession` actors that serialise the
/// work on each KV cache. Cells share the sessions: each use takes the least busy one, and
/// generations on one session decode together, up to `parallel` at a time.
public final class LoadedModel: MemberTableHostObject {
    /// The file's path.
    public let path: String
    /// Context length requested (nil: the model's).
    let contextLength: Int?
    /// Threads per session.
    let threads: Int
    /// Sessions in the pool.
    let instances: Int
    /// Sequences each session decodes together.
    let parallel: Int
    /// The LoRA adapter files applied to everything the model runs, with their scales.
    let adapterFiles: [(path: String, scale: Float)]
    /// The KV cache's type.
    let cacheType: KVCacheType
    /// The model and its sessions, nil once unloaded.
    private let loaded = Mutex<ModelContainer?>(nil)
    /// Each token's text as a label, made on first use (`tokenLabels`).
    private let labels = Mutex<[String]?>(nil)

    /// Loads the file at `path` with a pool of `instances` sessions of `parallel` sequences, every
    /// forward pass applying the LoRA adapters of `adapters` (read and checked against the model),
    /// keys and values in a cache of `cacheType` (refused when the model's heads do not fit it).
    init(path: String, contextLength: Int?, threads: Int, instances: Int, parallel: Int,
         adapters: [(path: String, scale: Float)] = [], cacheType: KVCacheType = .f32) throws(ModelError) {
        self.path = path
        self.contextLength = contextLength
        self.threads = threads
        self.instances = instances
        self.parallel = parallel
        adapterFiles = adapters
        self.cacheType = cacheType
        try open()
    }

    /// Each token's text as a label (`Tokenizer.textPiece`: byte fragments as `<0x..>`), what
    /// logits are labelled with; made once for the model and shared (copy on write).
    func tokenLabels(_ tokenizer: Tokenizer) -> [String] {
        if let known = labels.withLock({ $0 }) { return known }
        let made = (0..<tokenizer.vocabulary.count).map { tokenizer.textPiece(Int32($0)) }
        labels.withLock { $0 = made }
        return made
    }

    /// Reads the file again (after it changed on disk), replacing the weights and sessions.
    func reload() throws(ModelError) {
        labels.withLock { $0 = nil }
        WeightCache.shared.evict(path)
        try open()
    }

    private func open() throws(ModelError) {
        let model = try WeightCache.shared.model(at: path)
        let adapters = try AdapterSet(files: adapterFiles, for: model)
        guard model.configuration.fits(cacheType) else { throw ModelError(file: path, field: "cacheType", reason: model.configuration.misfit(cacheType)) }
        let settings = ModelContainer.Settings(contextLength: contextLength, threads: threads, sessions: instances, sequencesPerSession: parallel,
                                               adapters: adapters, cacheType: cacheType)
        let container = ModelContainer(model: model, settings: settings)
        loaded.withLock { $0 = container }
    }

    /// Releases the weights and sessions; later use is an error.
    func unload() {
        loaded.withLock { $0 = nil }
    }

    /// The model's container, or an error saying the model was unloaded.
    func container() throws(ModelError) -> ModelContainer {
        guard let container = loaded.withLock({ $0 }) else {
            throw ModelError(file: path, field: "model", reason: "was unloaded; load it again or call reload()")
        }
        return container
    }

    /// The sessions, or an error saying the model was unloaded.
    private func sessions() throws(ModelError) -> SessionPool {
        try container().sessions
    }

    /// The model, or an error saying it was unloaded.
    func model() throws(ModelError) -> LanguageModel {
        try sessions().model
    }

    /// A session of the pool, held until the lease is released or dropped: `preferring` when
    /// given (a conversation's), else the least busy.
    func lease(preferring: Int? = nil) async throws -> SessionLease {
        try await sessions().lease(preferring: preferring)
    }

    /// Runs `body` on the least busy session of the pool, held until `body` returns.
    func withSession<Result: Sendable>(_ body: (ModelSession) async throws -> Result) async throws -> Result {
        let lease = try await lease()
        defer { lease.release() }
        return try await body(lease.session)
    }

    public var typeName: String { "Model" }
    public static let memberTable = MemberTable<LoadedModel>(properties: [
        ("info", { .dictionary(try $0.infoDictionary()) }),
        ("name", { .string($0.name) }),
        ("path", { .string($0.path) }),
    ], methods: [ModelLibrary.generate, ModelLibrary.prefill, ModelLibrary.tokenize, ModelLibrary.tokenId, ModelLibrary.toText, ModelLibrary.nextTokens, ModelLibrary.perplexity,
                ModelLibrary.withAdapters])

    var name: String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }

    /// What the card shows, as name–value pairs.
    func infoPairs() throws(ModelError) -> [(String, Value)] {
        let model = try model()
        let configuration = model.configuration
        let sessionBytes = try sessions().stateByteCount
        return [
            ("architecture", .string(configuration.architecture)),
            ("vocabularyKind", .string(model.tokenizer.vocabulary.kindDescription)),
            ("chatTemplate", .bool(model.gguf.metadata["tokenizer.chat_template"] != nil)),
            ("parameters", .integer(model.parameterCount)),
            ("tensorTypes", .string(model.tensorTypeCounts)),
            ("contextLength", .integer(contextLength.map { min($0, configuration.contextLength) } ?? configuration.contextLength)),
            ("vocabulary", .integer(configuration.vocabularySize)),
            ("layers", .integer(configuration.blockCount)),
            ("embedding", .integer(configuration.embeddingLength)),
            ("fileBytes", .integer(model.gguf.mapping.bytes.count)),
            ("sessionBytes", .integer(sessionBytes)),
            ("cacheType", .string(cacheType.rawValue)),
            ("instances", .integer(instances)),
            ("parallel", .integer(parallel)),
        ] + (adapterFiles.isEmpty ? [] : [("lora", .string(adapterFiles.map { "\(URL(fileURLWithPath: $0.path).lastPathComponent) × \($0.scale)" }.joined(separator: ", ")))])
    }

    private func infoDictionary() throws(ModelError) -> LumenDictionary {
        LumenDictionary(try infoPairs())
    }

    public var summary: String {
        guard let pairs = try? infoPairs() else { return "Model \(name) (unloaded)" }
        return "Model \(name): " + pairs.map { "\($0.0) \($0.1.printed)" }.joined(separator: ", ")
    }

    public var mimeBundle: MIMEBundle {
        guard let pairs = try? infoPairs() else { return .plainText("Model \(name) (unloaded)") }
        let rows = pairs.map { "<tr><th style=\"text-align: left\">\(HTML.escape($0.0))</th><td>\(HTML.escape($0.1.printed))</td></tr>" }
        let html = """
            <div style="border: 1px solid rgba(127,127,127,0.4); border-radius: 6px; padding: 8px 12px; display: inline-block">
            <div style="font-weight: bold; margin-bottom: 4px">\(HTML.escape(name))</div>
            <table>\(rows.joined())</table></div>
            """
        let table = Table(columns: ["model", name], rows: pairs.map { [$0.0, $0.1.printed] })
        return MIMEBundle(["text/html": html, "text/plain": table.plainText])
    }
}
