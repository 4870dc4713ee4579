@_exported import ChatTemplates
import Executors
import Foundation
@_exported import GGUF
@_exported import GenerationTypes
@_exported import Grammars
@_exported import Inference
@_exported import RunRecords
@_exported import Scoring
@_exported import Tensors

/// A GGUF model loaded for use from Swift, in the sense of mlx-swift-lm's `ModelContainer`: its
/// weights (one mapping per file in the process, however many containers load it), a pool of
/// sessions whose generations decode together, its chat template with the reasoning syntax it
/// marks, the hooks every generation runs with, and, when given one, a run log recording each
/// generation. Every call is safe from any task; forward passes run on the sessions' own threads
/// and grammars compile on threads of their own, never on Swift's cooperative pool (a text
/// prompt is tokenized by the caller).
///
/// ```swift
/// let container = try await ModelContainer.load("SmolLM2-135M-Instruct.Q4_1.gguf")
/// for try await event in container.generate("Once upon a time", options: GenerationOptions(maxTokens: 32)) {
///     if case .token(let token) = event { print(token.text, terminator: "") }
/// }
/// ```
///
/// A generation streams as it is produced. Cancelling the task that reads the stream, or
/// dropping the stream, stops the work within one token; raising the `StopSignal` given to it
/// stops it too, but lets the stream end with its summary (which is then recorded as
/// interrupted).
public final class ModelContainer: Sendable {
    /// How a container is loaded: its sessions and their caches, and what every generation gets.
    public struct Settings: Sendable {
        /// Tokens each sequence's cache holds (nil: the model's context length, which also caps it).
        public var contextLength: Int?
        /// Threads each session's matrix products use.
        public var threads: Int
        /// Sessions, each with a cache of its own: requests go to the least busy.
        public var sessions: Int
        /// Generations each session decodes together, one token of each per forward pass.
        public var sequencesPerSession: Int
        /// Tokens of a prompt read in one forward pass.
        public var batchSize: Int
        /// Generations a session takes at once: more than `sequencesPerSession` wait in the
        /// session's queue; as many, and the rest wait for a session in the pool's, first come,
        /// first served, within the bounds each `SessionPool.lease` sets (as `lumen serve` does).
        public var requestsPerSession: Int
        /// A Jinja chat template used instead of the file's (nil: the file's, else the built-in
        /// format llama.cpp chooses for the file).
        public var chatTemplate: String?
        /// Hooks into every forward pass of every generation (control vectors, say), before each
        /// call's own.
        public var hooks: [any ForwardHook]
        /// The LoRA adapters every forward pass applies (checked against the model: `AdapterSet`).
        public var adapters: AdapterSet
        /// The KV cache's element type (one the model's heads fit: `ModelConfiguration.fits`).
        public var cacheType: KVCacheType

        /// The model's context, every core, one session decoding `ModelSession.defaultSequences`
        /// generations together, prompts read 64 tokens at a time, any number of generations
        /// queued on a session, the file's template, no hooks, no adapters, an F32 KV cache.
        public init(contextLength: Int? = nil, threads: Int = ProcessInfo.processInfo.activeProcessorCount, sessions: Int = 1,
                    sequencesPerSession: Int = ModelSession.defaultSequences, batchSize: Int = 64, requestsPerSession: Int = .max,
                    chatTemplate: String? = nil, hooks: [any ForwardHook] = [], adapters: AdapterSet = .none, cacheType: KVCacheType = .f32) {
            self.contextLength = contextLength
            self.threads = threads
            self.sessions = sessions
            self.sequencesPerSession = sequencesPerSession
            self.batchSize = batchSize
            self.requestsPerSession = requestsPerSession
            self.chatTemplate = chatTemplate
            self.hooks = hooks
            self.adapters = adapters
            self.cacheType = cacheType
        }
    }

    /// The weights, tokenizer and configuration.
    public let model: LanguageModel
    /// The sessions requests run on.
    public let sessions: SessionPool
    /// Hooks into every generation's forward passes.
    public let hooks: [any ForwardHook]
    /// The LoRA adapters every forward pass applies, unless a generation brings its own.
    public let adapters: AdapterSet
    /// Where generations are recorded, if anywhere.
    public let recorder: RunRecorder?
    /// The chat template, or why the file's (or the given one) cannot be used: a model whose
    /// template is broken still generates from text.
    private let template: Result<ChatTemplate, ModelError>

    /// A container over `model`'s weights with `settings`, recording to `recorder` when given.
    public init(model: LanguageModel, settings: Settings = Settings(), recorder: RunRecorder? = nil) {
        self.model = model
        sessions = SessionPool(model: model, instances: settings.sessions, contextLength: settings.contextLength, threads: settings.threads,
                               batchSize: settings.batchSize, sequences: settings.sequencesPerSession, requestsPerSession: settings.requestsPerSession,
                               adapters: settings.adapters, cacheType: settings.cacheType)
        hooks = settings.hooks
        adapters = settings.adapters
        self.recorder = recorder
        template = Result { () throws(ModelError) in
            try ChatTemplate(gguf: model.gguf, vocabulary: model.tokenizer.vocabulary, override: settings.chatTemplate)
        }
    }

    /// Loads the GGUF file at `path` (on a thread of its own: reading and mapping it block),
    /// sharing its weights with every other load of the file in the process.
    ///
    /// - Throws: `ModelError` naming the file and what is wrong with it.
    public static func load(_ path: String, settings: Settings = Settings(), recorder: RunRecorder? = nil) async throws(ModelError) -> ModelContainer {
        ModelContainer(model: try await WeightCache.shared.load(path), settings: settings, recorder: recorder)
    }

    /// The chat template that renders conversations for this model.
    ///
    /// - Throws: `ModelError` when the file's template (or the one given) cannot be parsed.
    public func chatTemplate() throws(ModelError) -> ChatTemplate {
        try template.get()
    }

    // MARK: - Text and tokens

    /// The tokens of `text`, with BOS as the vocabulary asks (`addSpecial`); special tokens'
    /// texts are read as text.
    public func tokenize(_ text: String, addSpecial: Bool = true) -> [Int32] {
        model.tokenizer.encode(text, addSpecial: addSpecial)
    }

    /// The text of `tokens`; special tokens' texts are left out unless `showSpecial`.
    public func detokenize(_ tokens: [Int32], showSpecial: Bool = false) -> String {
        model.tokenizer.decode(tokens, showSpecial: showSpecial)
    }

    // MARK: - Generation

    /// Generates text after `prompt`, streaming each token as it is produced, then a summary.
    /// `hooks` look into (or change) every forward pass of this generation, after the
    /// container's; `draft` drafts for speculative decoding when `options.speculation` asks for
    /// it (a model of the same vocabulary; without one, prompt lookup); `adapters` (made for this
    /// model) replace the container's for this generation alone. `run` is what the run log is
    /// told besides the tokens.
    public func generate(_ prompt: String, options: GenerationOptions = GenerationOptions(), hooks: [any ForwardHook] = [],
                         draft: LanguageModel? = nil, adapters: AdapterSet? = nil, stop: StopSignal = StopSignal(),
                         run: RunDescription = RunDescription(entry: "generate")) -> AsyncThrowingStream<TokenEvent, any Error> {
        var described = run
        described.prompt = described.prompt ?? prompt
        return generate(.text(prompt), options: options, hooks: hooks, draft: draft, adapters: adapters, stop: stop, run: described)
    }

    /// `generate(_:options:hooks:draft:adapters:stop:run:)` after a prompt of token ids, read as they are.
    /// `startingFrom` is a saved state (`ModelSession.cacheContents`, a cell's `State`) whose
    /// cache the session copies in first, unless its own holds more of the prompt
    /// (`ModelSession.generate(tokens:options:pipeline:stop:startingFrom:)`); the options should
    /// then reuse the cached prefix. `preferring` is the index of the session to wait for (a
    /// conversation's, whose cache holds its earlier turns) rather than the least busy.
    public func generate(tokens: [Int32], options: GenerationOptions = GenerationOptions(), hooks: [any ForwardHook] = [],
                         draft: LanguageModel? = nil, adapters: AdapterSet? = nil, stop: StopSignal = StopSignal(),
                         startingFrom state: ModelSession.CachedPrefix? = nil, preferring session: Int? = nil,
                         run: RunDescription = RunDescription(entry: "generate")) -> AsyncThrowingStream<TokenEvent, any Error> {
        generate(.tokens(tokens), options: options, hooks: hooks, draft: draft, adapters: adapters, stop: stop, startingFrom: state, preferring: session, run: run)
    }

    /// `generate(tokens:options:hooks:draft:adapters:stop:startingFrom:preferring:run:)` on a session the
    /// caller already holds — taken within bounds of its own, as `lumen serve` takes them within
    /// its queue limits — released when the generation ends. `grammar` is `options.constraint`
    /// compiled already (by a cache of compiled grammars, say), which is then not compiled again.
    public func generate(tokens: [Int32], on lease: SessionLease, options: GenerationOptions = GenerationOptions(), hooks: [any ForwardHook] = [],
                         grammar: Grammar? = nil, adapters: AdapterSet? = nil, stop: StopSignal = StopSignal(),
                         run: RunDescription = RunDescription(entry: "generate")) -> AsyncThrowingStream<TokenEvent, any Error> {
        generate(.tokens(tokens), options: options, hooks: hooks, draft: nil, adapters: adapters, stop: stop, lease: lease, grammar: grammar, run: run)
    }

    /// A prompt as text, tokenized on the session's thread, or as token ids.
    private enum Prompt: Sendable {
        case text(String)
        case tokens([Int32])
    }

    private func generate(_ prompt: Prompt, options: GenerationOptions, hooks: [any ForwardHook], draft: LanguageModel?, adapters: AdapterSet?,
                          stop: StopSignal,
                          startingFrom state: ModelSession.CachedPrefix? = nil, preferring session: Int? = nil,
                          lease held: SessionLease? = nil, grammar compiled: Grammar? = nil,
                          run: RunDescription) -> AsyncThrowingStream<TokenEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: TokenEvent.self)
        let producer = Task {
            // A session the caller took is released however the generation ends.
            defer { held?.release() }
            do {
                let allHooks = self.hooks + hooks
                // A grammar's compilation (bounded by `GrammarLimits`) and a draft's vocabulary check are
                // long compute: never on the cooperative pool.
                var compiling = options
                if compiled != nil { compiling.constraint = nil }
                let build: @Sendable () throws(any Error) -> GenerationPipeline = { [model, compiling] in
                    let size = model.tokenizer.vocabularySize
                    if let outside = compiling.sampling.logitBias.keys.sorted().first(where: { $0 < 0 || Int($0) >= size }) {
                        throw ModelError(file: model.gguf.path, field: "logit bias", reason: "names token \(outside), which is not in the vocabulary of \(size) (0…\(size - 1))")
                    }
                    var pipeline = try GenerationPipeline(options: compiling, model: model, hooks: allHooks)
                    if let compiled { pipeline.grammar = compiled }
                    if let draft { try GenerationPipeline.checkDraft(draft, for: model) }
                    pipeline.draftModel = draft
                    pipeline.adapters = adapters
                    return pipeline
                }
                let pipeline = compiling.constraint == nil && draft == nil ? try build() : try await DedicatedThread.run(name: "lumen-pipeline", build)
                let lease = if let held { held } else { try await sessions.lease(preferring: session) }
                defer { lease.release() }
                var collected = GenerationCollector()
                let generation = switch prompt {
                case let .text(text): lease.generate(text, options: options, pipeline: pipeline, stop: stop)
                case let .tokens(tokens): lease.generate(tokens: tokens, options: options, pipeline: pipeline, stop: stop, startingFrom: state)
                }
                for try await event in generation {
                    collected.add(event)
                    continuation.yield(event)
                }
                record(collected, prompt: prompt, options: options, adapters: adapters ?? self.adapters, interrupted: stop.isRaised, run: run)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in producer.cancel() }
        return events
    }

    /// Generates the next message of `messages` (rendered by the chat template, with the
    /// generation prompt), streaming it as `generate` does. The reasoning syntax's markers are
    /// kept in the text (`ReasoningStream` tells reasoning from reply); `thinking` switches
    /// thinking on or off for a template that reads `enable_thinking` (nil: its default). The
    /// longest prefix a session's cache already holds is reused, so each turn of a conversation
    /// reads only its new tokens.
    public func chat(_ messages: [ChatMessage], options: GenerationOptions = GenerationOptions(), thinking: Bool? = nil,
                     hooks: [any ForwardHook] = [], stop: StopSignal = StopSignal(),
                     run: RunDescription = RunDescription(entry: "chat")) -> AsyncThrowingStream<TokenEvent, any Error> {
        do {
            return chat(try chatPrompt(messages, thinking: thinking), options: options, hooks: hooks, stop: stop, run: run)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
    }

    /// `chat(_:options:thinking:hooks:stop:run:)` after a prompt already rendered (`chatPrompt`).
    public func chat(_ prompt: ChatPrompt, options: GenerationOptions = GenerationOptions(), hooks: [any ForwardHook] = [],
                     stop: StopSignal = StopSignal(), run: RunDescription = RunDescription(entry: "chat")) -> AsyncThrowingStream<TokenEvent, any Error> {
        var chatOptions = options
        chatOptions.reusesCachedPrefix = true
        chatOptions.shownTokens.formUnion(prompt.shownTokens)
        var described = run
        described.prompt = described.prompt ?? prompt.messages.last?.content ?? ""
        described.messages = described.messages ?? prompt.messages
        described.renderedPrompt = described.renderedPrompt ?? prompt.text
        return generate(tokens: prompt.tokens, options: chatOptions, hooks: hooks, stop: stop, run: described)
    }

    /// A conversation's prompt: the rendered text, its tokens and the reasoning markers'
    /// tokens, which the reply shows.
    public struct ChatPrompt: Sendable {
        /// The messages.
        public let messages: [ChatMessage]
        /// The messages rendered by the template, with the generation prompt.
        public let text: String
        /// Its tokens (special tokens written by the template parsed, BOS once).
        public let tokens: [Int32]
        /// The reasoning syntax's marker tokens, which the generation shows as text.
        public let shownTokens: Set<Int32>
        /// How the template marks reasoning, if it does.
        public let reasoning: ReasoningSyntax?
    }

    /// The prompt `chat` generates after for `messages`.
    ///
    /// - Throws: `ModelError` when the template cannot be used or fails to render them.
    public func chatPrompt(_ messages: [ChatMessage], thinking: Bool? = nil) throws(ModelError) -> ChatPrompt {
        let template = try chatTemplate()
        let text: String
        do {
            text = try template.render(messages, addGenerationPrompt: true, thinking: thinking)
        } catch {
            throw ModelError(file: "chat template", field: error.kind, reason: error.description)
        }
        let vocabulary = model.tokenizer.vocabulary
        return ChatPrompt(messages: messages, text: text, tokens: Conversation.promptTokens(model.tokenizer, text: text),
                          shownTokens: template.reasoning?.shownTokenIDs(in: vocabulary) ?? [], reasoning: template.reasoning)
    }

    // MARK: - Probabilities, scoring and activations

    /// The `k` likeliest next tokens after `prompt` (tokenized with BOS), likeliest first.
    ///
    /// - Throws: `ModelError` when the prompt is empty or does not fit the context.
    public func nextTokens(after prompt: String, k: Int = 10) async throws -> [TokenProbability] {
        try await nextTokens(after: tokenize(prompt), k: k)
    }

    /// `nextTokens(after:k:)` after a prompt of token ids, read as they are.
    public func nextTokens(after tokens: [Int32], k: Int = 10) async throws -> [TokenProbability] {
        try await withSession { session in
            try await session.nextTokenLogProbabilities(tokens: tokens, k: k).map { entry in
                TokenProbability(id: entry.id, text: model.tokenizer.textPiece(entry.id), logProbability: entry.logProbability)
            }
        }
    }

    /// The perplexity of `text`: over llama-perplexity's windows of `context` tokens when
    /// given, else over the whole text as one window; with every scored token's
    /// log-probability. `progress` is told the windows done and the estimate so far.
    ///
    /// - Throws: `ScoringError` when the text is too short for the windows, `ModelError` when it
    ///   does not fit or the task is cancelled.
    public func perplexity(of text: String, context: Int? = nil,
                           progress: @Sendable (Int, Estimate) -> Void = { _, _ in }) async throws -> (estimate: PerplexityEstimate, logProbabilities: [Float]) {
        try await withSession { session in
            let (tokens, windows) = try TextScoring.windows(for: text, session: session, context: context)
            return try await TextScoring.perplexity(of: tokens, windows: windows, session: session, progress: progress)
        }
    }

    /// The activations at `points` of `blocks` (TransformerLens' names and numbering) when
    /// `prompt` is read, one tensor per point, each labelled with the prompt's token pieces;
    /// `positions` keeps only those positions. Refused, naming the size, over `limitBytes`.
    ///
    /// - Throws: `ModelError` when the trace would be larger than `limitBytes`, the prompt does
    ///   not fit, or the task is cancelled.
    public func trace(_ prompt: String, points: [ActivationPoint], blocks: [Int], positions: [Int]? = nil,
                      limitBytes: Int = 1 << 30) async throws -> [ActivationPoint: Tensor] {
        let tokens = tokenize(prompt)
        let plan = ActivationTrace(points: points, blocks: blocks, positions: positions, configuration: model.configuration)
        let bytes = plan.bytes(tokens: tokens.count)
        guard bytes <= limitBytes else {
            throw ModelError(file: model.gguf.path, field: "trace",
                             reason: "would keep \(ActivationTrace.size(bytes)) for \(tokens.count) tokens (\(plan.cost(tokens: tokens.count))), over the limit of \(ActivationTrace.size(limitBytes))")
        }
        let capture = plan.capture(tokens: tokens.count)
        _ = try await withSession { session in try await session.evaluate(tokens, hooks: hooks + [capture]) }
        return plan.tensors(from: capture, labels: tokens.map { model.tokenizer.textPiece($0) })
    }

    /// Runs `body` on the least busy session, held until `body` returns (the session's own
    /// calls — `prefill`, `restore`, `evaluate` — for what the container does not wrap).
    public func withSession<Value: Sendable>(_ body: (ModelSession) async throws -> Value) async throws -> Value {
        let lease = try await sessions.lease()
        defer { lease.release() }
        return try await body(lease.session)
    }

    // MARK: - Recording

    /// Records a finished generation, made under `adapters`, when the container has a run log and the generation a summary.
    private func record(_ collected: GenerationCollector, prompt: Prompt, options: GenerationOptions, adapters: AdapterSet, interrupted: Bool,
                        run: RunDescription) {
        guard let recorder, let summary = collected.summary else { return }
        let promptText: String = if let given = run.prompt {
            given
        } else {
            switch prompt {
            case let .text(text): text
            case let .tokens(tokens): detokenize(tokens, showSpecial: true)
            }
        }
        recorder.log.record(RunRecord(generationAt: run.entry, origin: recorder.origin, model: RunModel(model, adapters: adapters),
                                      prompt: promptText, messages: run.messages,
                                      renderedPrompt: run.renderedPrompt, tokens: collected.tokens, summary: summary, options: options,
                                      interrupted: interrupted, steering: run.steering, interventions: run.interventions))
    }
}

/// One of the likeliest next tokens.
public struct TokenProbability: Sendable, Equatable {
    /// The token id.
    public let id: Int32
    /// Its text (a byte fragment as `<0x..>`).
    public let text: String
    /// Its log-probability.
    public let logProbability: Float
}
