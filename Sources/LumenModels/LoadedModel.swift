import Display
import Evaluation
import Foundation
import GGUF
import Inference
import LumenLanguage
import Synchronization

/// A model loaded in a session: its weights (shared with every other load of the same file) and a
/// pool of `ModelSession` actors that serialise the work on each KV cache.
public final class LoadedModel: PropertyTableHostObject {
    private struct State {
        var model: LanguageModel?
        var sessions: [ModelSession] = []
        var next = 0
    }

    /// The file's path.
    public let path: String
    /// Context length requested (nil: the model's).
    let contextLength: Int?
    /// Threads per session.
    let threads: Int
    /// Sessions in the pool.
    let instances: Int
    private let state = Mutex(State())

    /// Loads the file at `path` with a pool of `instances` sessions.
    init(path: String, contextLength: Int?, threads: Int, instances: Int) throws(ModelError) {
        self.path = path
        self.contextLength = contextLength
        self.threads = threads
        self.instances = instances
        try open()
    }

    /// Reads the file again (after it changed on disk), replacing the weights and sessions.
    func reload() throws(ModelError) {
        WeightCache.shared.evict(path)
        try open()
    }

    private func open() throws(ModelError) {
        let model = try WeightCache.shared.model(at: path)
        let sessions = (0..<instances).map { _ in ModelSession(model: model, contextLength: contextLength, threads: threads) }
        state.withLock { $0 = State(model: model, sessions: sessions) }
    }

    /// Releases the weights and sessions; later use is an error.
    func unload() {
        state.withLock { $0 = State() }
    }

    /// The model, or an error saying it was unloaded.
    func model() throws(ModelError) -> LanguageModel {
        guard let model = state.withLock({ $0.model }) else {
            throw ModelError(file: path, field: "model", reason: "was unloaded; load it again or call reload()")
        }
        return model
    }

    /// The next session of the pool, in turn.
    func session() throws(ModelError) -> ModelSession {
        let session: ModelSession? = state.withLock { state in
            guard !state.sessions.isEmpty else { return nil }
            defer { state.next = (state.next + 1) % state.sessions.count }
            return state.sessions[state.next]
        }
        guard let session else {
            throw ModelError(file: path, field: "model", reason: "was unloaded; load it again or call reload()")
        }
        return session
    }

    public var typeName: String { "Model" }
    public static let properties = PropertyTable<LoadedModel>([
        ("info", { .dictionary(try $0.infoDictionary()) }),
        ("name", { .string($0.name) }),
        ("path", { .string($0.path) }),
    ])
    public var methodNames: [String] { ["generate", "tokenize", "detokenize", "nextTokens", "perplexity"] }

    var name: String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }

    /// What the card shows, as name–value pairs.
    func infoPairs() throws(ModelError) -> [(String, Value)] {
        let model = try model()
        let configuration = model.configuration
        let sessionBytes = state.withLock { $0.sessions.reduce(0) { $0 + $1.stateByteCount } }
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
            ("instances", .integer(instances)),
        ]
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

/// Keeps one `LanguageModel` per file while any load uses it, so loading a file twice shares its
/// mapped weights.
final class WeightCache: Sendable {
    static let shared = WeightCache()

    private final class Weak: @unchecked Sendable {
        // Safety: `model` is written only in `init`; `weak` loads are atomic in Swift.
        weak var model: LanguageModel?
        init(_ model: LanguageModel) { self.model = model }
    }

    private let models = Mutex<[String: Weak]>([:])

    func model(at path: String) throws(ModelError) -> LanguageModel {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        if let cached = models.withLock({ $0[key]?.model }) { return cached }
        let model = try LanguageModel(path: key)
        models.withLock { $0[key] = Weak(model) }
        return model
    }

    /// Forgets `path`, so the next load reads the file again.
    func evict(_ path: String) {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        _ = models.withLock { $0.removeValue(forKey: key) }
    }
}
