import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage
import RunLog

extension ModelLibrary {
    static let prefill = Builtin(
        name: "prefill",
        signature: "prefill(_ model or state, _ prompt: String) -> State",
        summary: "Reads the prompt into a model's cache without generating and returns the state after it, a value: s.generate(text) continues from it without reading the prompt again (as often as wanted: each continuation starts from the same state), s.prefill(text) extends it, save(s, path) writes it to a file and loadState(m, path) reads it back."
    ) { arguments, context in
        let earlier: StateObject? = if case .host(let object as StateObject)? = arguments.peekPositional() { object } else { nil }
        if earlier != nil { _ = arguments.nextPositional() }
        let model = try earlier?.model ?? loadedModel(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        try arguments.finish()
        return try await modelWork(at: context.location) {
            let lease = try await model.lease()
            defer { lease.release() }
            let weights = try earlier?.checkedWeights() ?? lease.session.model
            let tokens = try earlier?.tokens(continuedBy: prompt) ?? weights.tokenizer.encode(prompt)
            _ = try await lease.session.prefill(tokens, startingFrom: earlier?.prefix)
            return .host(StateObject(model: model, weights: weights, prefix: await lease.session.cachedPrefix()))
        }
    }

    static let loadState = Builtin(
        name: "loadState",
        signature: "loadState(_ model, _ path: String) -> State",
        summary: "Reads a state save(s, path) wrote (or lumen generate --prompt-cache), refusing one made by another model file (their SHA-256 differ), of another cache type, or corrupt."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        try arguments.finish()
        let log = try context.models.recorder.runLog
        return try await modelWork(at: context.location) {
            let lease = try await model.lease()
            defer { lease.release() }
            let session = lease.session
            let digest = try await stateBinding(session.model, log: log)
            let adapters = await session.adapters
            let prefix = try await DedicatedThread.run(name: "lumen-state-read") { () throws(ModelError) in
                try SavedState.read(from: path, for: session, modelSHA256: digest, adapters: adapters)
            }
            return .host(StateObject(model: model, weights: session.model, prefix: prefix))
        }
    }

    /// Writes `state` to `path`, bound to its model file's SHA-256 (`save(s, path)`).
    static func save(_ state: StateObject, to path: String, context: Builtin.Context) async throws {
        let log = try context.models.recorder.runLog
        try await modelWork(at: context.location) {
            let weights = try state.checkedWeights()
            let digest = try await stateBinding(weights, log: log)
            let prefix = state.prefix
            try await DedicatedThread.run(name: "lumen-state-write") { () throws(ModelError) in
                try SavedState.write(prefix, to: path, modelSHA256: digest)
            }
        }
    }

    /// The SHA-256 of `model`'s file, which binds a state to it (remembered by the run log when
    /// there is one).
    private static func stateBinding(_ model: LanguageModel, log: RunLog?) async throws(ModelError) -> String {
        guard let digest = await RunLog.digest(of: model.gguf.path, rememberedBy: log) else {
            throw ModelError(file: model.gguf.path, field: "file", reason: "cannot be read to take its SHA-256, which binds a state to it")
        }
        return digest
    }
}
