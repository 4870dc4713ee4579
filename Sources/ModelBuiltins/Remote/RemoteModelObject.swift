import ChatTemplates
import Display
import Foundation
import Evaluation
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import OpenAIAPI
import Remote
import RunLog
import Scoring

/// A model served over the OpenAI-compatible API, as a cell value (`connect(url, model:)`): the
/// same cells that generate with a loaded model generate with it.
public final class RemoteModelObject: MemberTableHostObject, GenerativeModel {
    /// The connection.
    let remote: RemoteModel

    init(_ remote: RemoteModel) {
        self.remote = remote
    }

    public var typeName: String { "RemoteModel" }
    public static let memberTable = MemberTable<RemoteModelObject>(properties: [
        ("info", { .dictionary(LumenDictionary($0.infoPairs)) }),
        ("name", { .string($0.remote.name) }),
        ("url", { .string($0.remote.urls[0]) }),
    ], methods: [ModelLibrary.generate, ModelLibrary.nextTokens, ModelLibrary.perplexity])

    var name: String { remote.name }

    var place: String {
        guard let url = URLComponents(string: remote.urls[0]), let host = url.host else { return remote.urls[0] }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    var runModel: RunModel? {
        RunModel(name: remote.name, path: remote.urls.joined(separator: " "), architecture: "remote", tensorTypes: "")
    }

    func generate(_ prompt: String, options: GenerationOptions, hooks: [any ForwardHook], stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error> {
        guard hooks.isEmpty else {
            throw ModelError(file: remote.name, field: "steer", reason: "a served model does not expose its activations: steer a model loaded with load()")
        }
        return remote.generate(prompt, options: options, stop: stop)
    }

    /// Generates after `prompt` steered by `steering`: the server's control vectors and SAEs, by
    /// name (hooks, which hold activations' values, it refuses as `generate` does).
    func generate(_ prompt: String, options: GenerationOptions, steering: SteeringFields, hooks: [any ForwardHook], stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error> {
        guard hooks.isEmpty else { return try await generate(prompt, options: options, hooks: hooks, stop: stop) }
        return remote.generate(prompt, options: options, steering: steering, stop: stop)
    }

    func nextTokens(_ prompt: String, k: Int) async throws -> [(id: Int32?, piece: String, logProbability: Double)] {
        try await remote.nextTokens(prompt, k: k).map { (nil, $0.text, $0.logProbability) }
    }

    func conversation(system: String?, template: String?, note: (String) -> Void) async throws -> ChatSession {
        guard template == nil else {
            throw ModelError(file: remote.name, field: "template", reason: "a served model's conversations are rendered by the server's own template")
        }
        return ChatSession(model: self, engine: RemoteChat(model: remote), conversation: Conversation(system: system))
    }

    /// The server scores the whole text in one request (`echo` with `logprobs`), so there are
    /// no windows: the text's tokens after the first, as a loaded model's single window.
    func perplexity(_ request: ScoringRequest, progress: (Int, Int, Estimate) -> Void) async throws -> PerplexityScores {
        guard request.context == nil else {
            throw ModelError(file: remote.name, field: "context", reason: "a served model scores a text whole, in one request; "
                             + "scoring in windows (context:, and file: scores 512-token windows unless told) needs a model loaded with load()")
        }
        let logProbabilities = try await remote.promptLogProbabilities(try await request.text()).map(Float.init)
        guard !logProbabilities.isEmpty else {
            throw ModelError(file: remote.name, field: "text", reason: "needs at least two tokens to score one")
        }
        var accumulated = PerplexityEstimate()
        accumulated.add(logProbabilities)
        progress(1, 1, accumulated.perplexity)
        return PerplexityScores(logProbabilities: logProbabilities, estimate: accumulated.perplexity, context: logProbabilities.count + 1,
                                method: "scored by the server")
    }

    func loaded(for use: String) throws(ModelError) -> LoadedModel {
        throw ModelError(file: remote.name, field: use, reason: "needs the model's weights, and a served model shares neither them nor its activations: use a model loaded with load()")
    }

    private var infoPairs: [(String, Value)] {
        [
            ("model", .string(remote.name)),
            ("endpoints", .array(remote.urls.map { .string($0) })),
            ("served", .array(remote.served.map { .string($0.id) })),
            ("concurrency", .integer(remote.concurrency)),
            ("logprobs", .bool(remote.logprobs)),
        ]
    }

    public var summary: String {
        "RemoteModel \(remote.name): " + infoPairs.map { "\($0.0) \($0.1.printed)" }.joined(separator: ", ")
    }

    public var mimeBundle: MIMEBundle {
        let table = Table(columns: ["remote model", remote.name], rows: infoPairs.map { [$0.0, $0.1.printed] })
        return table.mimeBundle
    }
}
