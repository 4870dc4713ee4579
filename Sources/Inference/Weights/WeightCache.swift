import Executors
import Foundation
import GGUF
import Synchronization

/// Keeps one `LanguageModel` per file while anything uses it, so every load of a file in this
/// process (cells, `lumen serve`, the commands) shares its mapped weights.
public final class WeightCache: Sendable {
    /// The process's cache.
    public static let shared = WeightCache()

    private final class Weak: @unchecked Sendable {
        // Safety: `model` is written only in `init`; `weak` loads are atomic in Swift.
        weak var model: LanguageModel?
        init(_ model: LanguageModel) { self.model = model }
    }

    private let models = Mutex<[String: Weak]>([:])

    /// The weights of the file at `path`: the ones already loaded, or read now.
    public func model(at path: String) throws(ModelError) -> LanguageModel {
        let key = Self.key(path)
        if let cached = models.withLock({ $0[key]?.model }) { return cached }
        let model = try LanguageModel(path: key)
        // Two first loads of one file can race; the one stored first is everyone's.
        return models.withLock { models in
            if let stored = models[key]?.model { return stored }
            models[key] = Weak(model)
            return model
        }
    }

    /// `model(at:)` on a thread of its own, off Swift's cooperative pool: reading a file's
    /// header and mapping it block.
    public func load(_ path: String) async throws(ModelError) -> LanguageModel {
        try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in try self.model(at: path) }
    }

    /// Forgets `path`, so the next load reads the file again.
    public func evict(_ path: String) {
        _ = models.withLock { $0.removeValue(forKey: Self.key(path)) }
    }

    /// One name per file, however `path` spells it.
    private static func key(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
