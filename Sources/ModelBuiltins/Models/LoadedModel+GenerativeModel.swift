import ChatTemplates
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import RunLog
import Scoring

extension LoadedModel: GenerativeModel {
    var place: String { "local" }

    var runModel: RunModel? {
        guard let container = try? container() else { return nil }
        return RunModel(container.model, name: name, adapters: container.adapters)
    }

    func generate(_ prompt: String, options: GenerationOptions, hooks: [any ForwardHook], stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error> {
        try await generate(prompt, options: options, hooks: hooks, draft: nil, stop: stop)
    }

    /// `generate(_:options:hooks:stop:)` with `draft` drafting for speculative decoding (when
    /// `options.speculation` asks for it), under `adapters` instead of the model's when given.
    func generate(_ prompt: String, options: GenerationOptions, hooks: [any ForwardHook], draft: LanguageModel?, adapters: AdapterSet? = nil,
                  stop: StopSignal) async throws -> AsyncThrowingStream<TokenEvent, any Error> {
        try container().generate(prompt, options: options, hooks: hooks, draft: draft, adapters: adapters, stop: stop)
    }

    func nextTokens(_ prompt: String, k: Int) async throws -> [(id: Int32?, piece: String, logProbability: Double)] {
        try await withSession { session in
            try await Self.pieces(session.nextTokenLogProbabilities(prompt, k: k), session: session)
        }
    }

    /// `nextTokens(_:k:)` after a prompt of token ids, read as they are.
    func nextTokens(tokens: [Int32], k: Int) async throws -> [(id: Int32?, piece: String, logProbability: Double)] {
        try await withSession { session in
            try await Self.pieces(session.nextTokenLogProbabilities(tokens: tokens, k: k), session: session)
        }
    }

    private static func pieces(_ top: [(id: Int32, logProbability: Float)], session: ModelSession) -> [(id: Int32?, piece: String, logProbability: Double)] {
        top.map { entry in
            (entry.id, session.model.tokenizer.textPiece(entry.id), Double(entry.logProbability))
        }
    }

    /// `generate(_:options:hooks:stop:)` after a prompt of token ids, read as they are, under
    /// `adapters` instead of the model's when given.
    func generate(tokens: [Int32], options: GenerationOptions, hooks: [any ForwardHook], adapters: AdapterSet? = nil, stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error> {
        try container().generate(tokens: tokens, options: options, hooks: hooks, adapters: adapters, stop: stop)
    }

    func conversation(system: String?, template: String?, note: (String) -> Void) async throws -> ChatSession {
        let llama = try model()
        let conversation = try Conversation(gguf: llama.gguf, vocabulary: llama.tokenizer.vocabulary, system: system, template: template)
        if let fallback = conversation.template?.origin.fallbackNote(model: name, option: "template:") {
            note(fallback + "\n")
        }
        // The conversation keeps to the least busy session of now, whose cache then holds its turns.
        let lease = try await lease()
        lease.release()
        return ChatSession(model: self, engine: LocalChat(model: self, sessionIndex: lease.index), conversation: conversation)
    }

    func perplexity(_ request: ScoringRequest, progress: (Int, Int, Estimate) -> Void) async throws -> PerplexityScores {
        try await withSession { session in
            let (tokens, windows) = try await request.windows(base: session)
            let count = windows.windows.count
            let result = try await TextScoring.perplexity(of: tokens, windows: windows, session: session) { done, estimate in
                progress(done, count, estimate)
            }
            return PerplexityScores(logProbabilities: result.logProbabilities, estimate: result.estimate.perplexity, context: request.context ?? tokens.count,
                                    method: request.context.map { "\(count) windows of \($0)" })
        }
    }

    func loaded(for use: String) throws(ModelError) -> LoadedModel { self }
}

extension LoadedModel {
    /// How the model's chat template marks its reasoning, if it does.
    var reasoningSyntax: ReasoningSyntax? {
        (try? model()).flatMap { $0.gguf.metadata["tokenizer.chat_template"]?.stringValue }.flatMap(ReasoningSyntax.used(byTemplate:))
    }
}
