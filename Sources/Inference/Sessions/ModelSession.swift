import CPUBackend
import Executors
import Foundation
import GGUF
import GenerationTypes
import Synchronization

/// A model's place to run: owns a KV cache of one or more sequences, so a model's session is never
/// used from two threads at once. Its compute runs on a dedicated thread (its own executor), so
/// long inference never occupies Swift's cooperative pool. Sessions of one file share its weights.
/// Generations given to a session at once decode together, one token of each in one forward pass
/// (up to `sequenceCapacity` of them; see `ModelSession+Batching.swift`).
public actor ModelSession {
    /// The model this session runs.
    public nonisolated let model: LanguageModel
    private let executor: ThreadExecutor
    let state: InferenceState
    /// The context length of this session's cache.
    public nonisolated let contextLength: Int
    /// Bytes of KV cache and buffers.
    public nonisolated let stateByteCount: Int
    /// The KV cache's element type.
    public nonisolated let cacheType: KVCacheType
    /// Bytes of keys and values one cached token takes (a saved state's size per token).
    public nonisolated let bytesPerCachedToken: Int
    /// Bytes of one sequence's recurrent state (0 for a model of attention layers only), which a
    /// saved state holds after its keys and values.
    public nonisolated let recurrentStateBytes: Int
    /// How many sequences decode together at most.
    public nonisolated let sequenceCapacity: Int
    /// The sequences a session of `lumen serve` or of a cell's model decodes together unless told
    /// otherwise: llama-server's slots when it chooses them.
    public static let defaultSequences = 4
    /// What each sequence's cache holds. A generation alone, and everything else a session does
    /// (scoring, looking inside, states), uses the first.
    var sequences: [CachedSequence]
    /// Generations waiting to join the batch, and whether the batch is running
    /// (`ModelSession+Batching.swift`).
    let inbox = Mutex(BatchInbox())

    /// What one sequence of the cache holds.
    struct CachedSequence {
        /// The tokens whose keys and values are in the cache, in order.
        var tokens: [Int32] = []
        /// Whether hooks (or adapters changed partway) may have changed what the cache holds: such
        /// a cache is never reused, and a generation with hooks reuses none, so every prefix
        /// reused was computed as a plain run would.
        var altered = false
        /// How many of the cached tokens were read as whole prompt batches from position 0: a
        /// prompt that starts with them reuses them exactly, its logits bit for bit a fresh read's.
        var alignedTokens = 0
        /// The LoRA adapters the cached tokens were computed under: only a generation under the
        /// same reuses them.
        var adapters = AdapterSet.none
        /// The logits after the last prompt read into this sequence, while the cache still holds
        /// that prompt: a generation with the same prompt starts from them without reading it.
        var promptLogits: PromptLogits?
    }

    /// The logits after a prompt of `tokenCount` tokens (the first of a sequence's cached tokens).
    struct PromptLogits {
        let tokenCount: Int
        /// Whether the prompt was read as a fresh read would (`PrefixReuse.exact` or `.none`), so
        /// the logits are bit for bit a fresh read's.
        let exact: Bool
        let values: [Float]
    }

    /// The dedicated thread's executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Creates a session with a cache of `contextLength` tokens (default and cap: the model's
    /// context length) for each of `sequences` sequences decoded together, whose matrix products
    /// use `threads` threads.
    /// `activations` chooses exact F32 activations or llama.cpp's faster 8-bit ones for quantized
    /// weights; `cacheType` an F32, F16 (half the memory, llama.cpp's default) or Q8_0 KV cache (one
    /// the model's heads fit: `ModelConfiguration.fits`);
    /// `adapters` the LoRA adapters (made for `model`) every forward pass applies.
    public init(model: LanguageModel, contextLength: Int? = nil, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
                batchSize: Int = 64, activations: ActivationPrecision = .quantized, cacheType: KVCacheType = .f32, sequences: Int = 1,
                adapters: AdapterSet = .none) {
        precondition(adapters.fits(model), "adapters made for another model")
        precondition(model.configuration.fits(cacheType), "a \(cacheType.rawValue) cache for heads of \(model.configuration.headWidths)")
        self.model = model
        executor = ThreadExecutor(name: "lumen-session")
        let context = max(1, min(contextLength ?? model.configuration.contextLength, model.configuration.contextLength))
        let state = InferenceState(model: model, contextLength: context, batchCapacity: max(1, batchSize), threads: max(1, threads),
                                   activations: activations, cacheType: cacheType, sequences: sequences)
        state.useAdapters(adapters)
        self.state = state
        sequenceCapacity = state.sequenceCapacity
        self.sequences = Array(repeating: CachedSequence(), count: state.sequenceCapacity)
        self.contextLength = context
        stateByteCount = state.byteCount
        self.cacheType = cacheType
        bytesPerCachedToken = state.bytesPerCachedToken
        recurrentStateBytes = state.recurrentStateBytes
    }

    /// The LoRA adapters every forward pass of this session applies.
    public var adapters: AdapterSet { state.adapters }

    /// Makes every forward pass from now on apply `adapters` (as llama.cpp's
    /// `llama_set_adapters_lora` does for a context); what the cache holds was computed under the
    /// adapters before, and is reused only by a generation under those again.
    ///
    /// - Throws: `ModelError` when the adapters were checked against another model.
    public func useAdapters(_ adapters: AdapterSet) throws(ModelError) {
        try checkFits(adapters)
        state.useAdapters(adapters)
    }

    // MARK: - Generation

    /// Generates text after `prompt`, streaming tokens as they are produced.
    ///
    /// Cancelling the consuming task, or dropping the stream, stops the work within one token
    /// (or prompt batch); the stream then ends with finish reason `cancelled`, and the session
    /// stays usable.
    /// Raising `stop` also stops it, but lets the stream finish with its summary.
    ///
    /// `pipeline` replaces the processors, sampler and stop conditions `options` describe, and
    /// adds hooks into the forward passes (see `GenerationPipeline`).
    public nonisolated func generate(_ prompt: String, options: GenerationOptions = GenerationOptions(), pipeline: GenerationPipeline? = nil,
                                     stop: StopSignal = StopSignal()) -> AsyncThrowingStream<TokenEvent, any Error> {
        stream(.text(prompt), options: options, pipeline: pipeline, stop: stop)
    }

    /// Generates text after the prompt `tokens` (already tokenized: a rendered chat, say). With
    /// `options.reusesCachedPrefix`, the longest prefix the cache already holds is reused, so a
    /// conversation's next turn processes only its new tokens; the summary says how many were.
    /// `startingFrom` is another session's cache (a forked conversation's parent's): when it
    /// holds a longer prefix of `tokens` than this session's cache, it is copied in first, so
    /// that prefix is reused too. `pipeline` is as for `generate(_:options:pipeline:stop:)`.
    public nonisolated func generate(tokens: [Int32], options: GenerationOptions = GenerationOptions(), pipeline: GenerationPipeline? = nil,
                                     stop: StopSignal = StopSignal(), startingFrom inherited: CachedPrefix? = nil) -> AsyncThrowingStream<TokenEvent, any Error> {
        stream(.tokens(tokens), options: options, pipeline: pipeline, stop: stop, inherited: inherited)
    }

    /// What a session's cache holds: its tokens with their keys and values, for another session
    /// of the same model to start from.
    public struct CachedPrefix: Sendable {
        /// The tokens cached, in order.
        public let tokens: [Int32]
        /// Their keys and values (`InferenceState.cacheContents`).
        let contents: [UInt8]
        /// The cache's element type.
        public let cacheType: KVCacheType
        /// How many of the tokens were read as whole prompt batches of `batchCapacity` from
        /// position 0, so a prompt reuses them exactly.
        let alignedTokens: Int
        let batchCapacity: Int
        /// The LoRA adapters they were computed under: another session reuses them only under the same.
        var adapters = AdapterSet.none

        /// The bytes the keys and values take (copies of a prefix share them).
        public var byteCount: Int { contents.count }
    }

    /// A copy of what the (first sequence's) cache holds now.
    public func cachedPrefix() -> CachedPrefix {
        let cached = sequences[0]
        let tokens = cached.altered ? [] : cached.tokens
        return CachedPrefix(tokens: tokens, contents: state.cacheContents(count: tokens.count), cacheType: state.cacheType,
                            alignedTokens: cached.altered ? 0 : cached.alignedTokens, batchCapacity: state.batchCapacity, adapters: cached.adapters)
    }

    /// Puts `saved` (a `cachedPrefix()` of a session of this model, or a `SavedState`) into the
    /// cache of `sequence`: a prompt that starts with its tokens then reuses them (exactly their
    /// whole batches read as a prompt, or all of them for a conversation).
    public func restore(_ saved: CachedPrefix, sequence: Int = 0) {
        precondition(saved.cacheType == state.cacheType && saved.tokens.count <= contextLength, "a state of another cache")
        state.restoreCache(saved.contents, count: saved.tokens.count, sequence: sequence)
        sequences[sequence] = CachedSequence(tokens: saved.tokens, altered: false,
                                             alignedTokens: saved.batchCapacity == state.batchCapacity ? saved.alignedTokens : 0, adapters: saved.adapters)
    }

    /// Reads `tokens` into the cache as a generation's prompt would (after the whole batches of a
    /// cached prefix, reused exactly), without generating. Returns how many tokens were reused.
    /// Given `inherited` (a state the tokens continue), it is put into the cache first and all
    /// the prefix it shares with `tokens` is reused.
    ///
    /// - Throws: `ModelError` when the tokens are empty or do not fit, or the task is cancelled.
    public func prefill(_ tokens: [Int32], startingFrom inherited: CachedPrefix? = nil) throws(ModelError) -> Int {
        try check(tokens, hooks: [])
        if let inherited { restore(inherited) }
        guard let reused = try ingest(tokens, reuse: sequences[0].altered ? .none : inherited == nil ? .exact : .any) else {
            throw ModelError(file: model.gguf.path, field: "task", reason: "cancelled")
        }
        return reused
    }

    /// Copies `inherited` into the cache of `sequence` when it shares a longer prefix with
    /// `tokens` than that cache does.
    func adopt(_ inherited: CachedPrefix, for tokens: [Int32], sequence: Int = 0) {
        func common(_ cached: [Int32]) -> Int { zip(cached, tokens).prefix { $0 == $1 }.count }
        let cached = sequences[sequence]
        guard inherited.cacheType == state.cacheType, inherited.tokens.count <= contextLength, inherited.adapters == state.adapters(of: sequence),
              common(inherited.tokens) > (cached.altered ? 0 : common(cached.tokens)) else { return }
        restore(inherited, sequence: sequence)
    }

    /// A prompt as text (tokenized on the session's thread) or as tokens.
    enum Prompt: Sendable {
        case text(String)
        case tokens([Int32])
    }

    /// The events of a generation produced on this session's thread; `lease`, when given, is
    /// released as soon as the generation ends. It joins the session's batch, unless it must run
    /// alone (`runsAlone`).
    nonisolated func stream(_ prompt: Prompt, options: GenerationOptions, pipeline: GenerationPipeline?, stop: StopSignal,
                            inherited: CachedPrefix? = nil, lease: SessionLease? = nil) -> AsyncThrowingStream<TokenEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TokenEvent.self)
        let parts: GenerationPipeline
        do {
            parts = try pipeline ?? GenerationPipeline(options: options, model: model)
        } catch {
            lease?.release()
            continuation.finish(throwing: error)
            return stream
        }
        let generation = QueuedGeneration(prompt: prompt, options: options, pipeline: parts, stop: stop, inherited: inherited, lease: lease,
                                          continuation: continuation)
        guard Self.runsAlone(options: options, pipeline: parts) else {
            continuation.onTermination = { _ in generation.abandoned.raise() }
            enqueue([generation])
            return stream
        }
        inbox.withLock { $0.waitingAlone += 1 }
        let producer = Task {
            await self.produce(generation)
        }
        continuation.onTermination = { _ in producer.cancel() }
        return stream
    }

    /// Whether a generation must run alone rather than in a batch: speculative decoding runs its
    /// own passes of several tokens, verified and taken back. (Hooks batch: each sees only its
    /// own sequence's rows.)
    static func runsAlone(options: GenerationOptions, pipeline: GenerationPipeline) -> Bool {
        options.speculation != nil
    }

    /// Runs a generation alone, giving its lease back before the stream ends, so whoever reads
    /// the end finds the session free; then lets the batch go on, if generations wait for it.
    private func produce(_ generation: QueuedGeneration) {
        inbox.withLock { $0.waitingAlone -= 1 }
        defer { resumeBatches() }
        let promptTokens = generation.promptTokens(model.tokenizer)
        if let inherited = generation.inherited, generation.options.reusesCachedPrefix { adopt(inherited, for: promptTokens) }
        do {
            let summary = try run(promptTokens: promptTokens, options: generation.options, pipeline: generation.pipeline, stop: generation.stop,
                                  asked: generation.arrived) { token in
                let position = state.position
                inbox.withLock { $0.tokensInUse = [0: position] }
                generation.continuation.yield(.token(token))
            }
            inbox.withLock { $0.tokensInUse = [:] }
            generation.finish(summary)
        } catch {
            inbox.withLock { $0.tokensInUse = [:] }
            generation.fail(error)
        }
    }

    /// Runs a generation alone on this actor's thread, handing each token to `emit`; it was
    /// asked for at `asked` (its time to first token counts from then). The pipeline's hooks look
    /// into every forward pass of it, the prompt's included.
    func run(promptTokens: [Int32], options: GenerationOptions, pipeline: GenerationPipeline, stop: StopSignal,
             asked: ContinuousClock.Instant = .now, emit: (GeneratedToken) -> Void) throws(ModelError) -> GenerationSummary {
        func shouldStop() -> Bool { Task.isCancelled || stop.isRaised }
        let started = ContinuousClock.now
        try check(promptTokens, hooks: pipeline.hooks)
        let ownAdapters = try self.ownAdapters(of: pipeline)
        state.hooks = pipeline.hooks
        state.useAdapters(ownAdapters, for: 0)
        defer {
            state.hooks = []
            state.useAdapters(nil, for: 0)
        }
        let reuse: PrefixReuse = !pipeline.hooks.isEmpty || sequences[0].altered ? .none : options.reusesCachedPrefix ? .any : .exact
        guard let reused = try ingest(promptTokens, reuse: reuse, stop: stop) else {
            return GenerationProgress.cancelled(promptTokens: promptTokens.count)
        }
        // A draft model reads the prompt as part of reading it.
        var speculator = speculator(for: options, pipeline: pipeline, prompt: promptTokens, stop: stop)
        speculator?.prepare(prompt: promptTokens)
        var progress = GenerationProgress(promptTokens: promptTokens, reused: reused, options: options, pipeline: pipeline, model: model,
                                          asked: asked, readFrom: started)
        // The drafts being verified: the cache holds them after the position `base`, and `row`
        // is the row of logits the next token is drawn from (the drafts before it accepted).
        var verifying: (drafts: [Int32], base: Int, row: Int)?
        defer {
            if let verifying { rewindDrafts(to: verifying.base + verifying.row + 1) }
        }
        let vocabulary = model.configuration.vocabularySize
        while true {
            let logits = UnsafeBufferPointer(start: state.logits + (verifying?.row ?? 0) * vocabulary, count: vocabulary)
            let contextFull = (verifying.map { $0.base + $0.row + 1 } ?? state.position) >= state.contextLength
            guard let next = try progress.advance(logits: logits, contextFull: contextFull, shouldStop: shouldStop, emit: emit) else { break }
            if let (drafts, base, row) = verifying {
                // A draft the model drew itself is accepted: its logits are already computed.
                if row < drafts.count, next == drafts[row] {
                    verifying = (drafts, base, row + 1)
                    continue
                }
                speculator?.verified(drafts.count, accepted: row)
                rewindDrafts(to: base + row + 1)
                verifying = nil
            }
            let drafts = speculator?.draft(after: sequences[0].tokens + [next],
                                           room: min(options.maxTokens - progress.summary.generatedTokens - 1, state.contextLength - state.position - 1,
                                                     state.batchCapacity - 1)) ?? []
            let base = state.position
            if drafts.isEmpty {
                try forward([next])
            } else {
                // Verified as decoding them one by one would compute them, bit for bit.
                state.backend.tokenByToken = true
                defer { state.backend.tokenByToken = false }
                try forward([next] + drafts, allLogits: true)
                verifying = (drafts, base, 0)
            }
        }
        // The drafts past the last token drawn were never checked.
        if let verifying { speculator?.verified(verifying.row, accepted: verifying.row) }
        var summary = progress.finished()
        summary.draftedTokens = speculator?.drafted ?? 0
        summary.acceptedTokens = speculator?.accepted ?? 0
        return summary
    }

    /// The speculative decoding `options` ask for, unless hooks look into the forward passes
    /// (they would see drafts that are thrown away), tokens are forced, or the model (or draft
    /// model) keeps a recurrent state.
    private func speculator(for options: GenerationOptions, pipeline: GenerationPipeline, prompt: [Int32], stop: StopSignal) -> Speculator? {
        // A recurrent state cannot take back rejected drafts.
        guard let speculation = options.speculation, pipeline.hooks.isEmpty, options.forcedTokens.isEmpty, !state.isRecurrent,
              pipeline.draftModel?.configuration.recurrence == nil else { return nil }
        let draftMax = min(speculation.draftMax, state.batchCapacity - 1)
        if let draft = pipeline.draftModel {
            let context = min(contextLength, prompt.count + min(options.maxTokens, contextLength) + draftMax + 1)
            let drafter = DraftModel(model: draft, contextLength: context, sharingThreadsOf: state, probabilityMin: speculation.draftProbabilityMin, stop: stop)
            return Speculator(drafter: drafter, draftMax: draftMax)
        }
        return speculation.lookupNgram.map { Speculator(drafter: PromptLookup(ngram: $0), draftMax: draftMax) }
    }

    /// Drops the drafts past `position` from the cache: their keys and values are overwritten
    /// by the next forward pass.
    private func rewindDrafts(to position: Int) {
        state.position = position
        sequences[0].tokens.removeLast(max(0, sequences[0].tokens.count - position))
        if let saved = sequences[0].promptLogits, saved.tokenCount > position { sequences[0].promptLogits = nil }
    }

    /// How much of the cache a prompt may start from.
    enum PrefixReuse {
        /// None: the prompt is read from position 0.
        case none
        /// The whole batches of the longest common prefix that were read as a prompt from
        /// position 0 (`alignedTokens`): the rest is read in the batches a fresh read would use,
        /// so the logits are bit for bit a fresh read's. What every generation does by default.
        case exact
        /// The longest common prefix, however it was computed (a conversation's earlier turns,
        /// generated tokens included): fastest; the logits may differ from a fresh read's in the
        /// last bits.
        case any

        /// How many of a prompt of `count` tokens a cache that shares `common` of them, `aligned`
        /// of its tokens read as whole batches of `batch`, gives.
        func reusable(common: Int, aligned: Int, count: Int, batch: Int) -> Int {
            switch self {
            case .none: 0
            case .exact: min(common, aligned, count - 1) / batch * batch
            case .any: min(common, count - 1)
            }
        }
    }

    /// Brings the cache of `sequence` (the first: the one a session alone uses) to hold `tokens`,
    /// processing them in batches after the prefix `reuse` allows; the logits of the last token
    /// end up in the state. Returns how many tokens were reused, or nil if cancelled between
    /// batches (the cache then holds the batches done, and stays consistent).
    private func ingest(_ tokens: [Int32], reuse: PrefixReuse = .none, stop: StopSignal? = nil, sequence: Int = 0) throws(ModelError) -> Int? {
        var read = startReading(tokens, reuse: reuse, sequence: sequence)
        while !read.isDone {
            if Task.isCancelled || stop?.isRaised == true { return nil }
            try readBatch(&read)
        }
        return read.reused
    }

    /// A prompt being read into a sequence's cache, batch by batch (`readBatch`).
    struct PromptRead {
        let tokens: [Int32]
        let sequence: Int
        /// How many tokens came from the cache.
        let reused: Int
        /// The first token not read yet.
        var next: Int
        /// How many of the tokens will have been read as whole batches from position 0.
        let alignedAfter: Int
        /// How the cache was reused: the logits are a fresh read's unless `.any`.
        let reuse: PrefixReuse
        /// When the reading started.
        let started = ContinuousClock.now
        var isDone: Bool { next >= tokens.count }
    }

    /// Starts reading `tokens` into the cache of `sequence` after the prefix `reuse` allows: the
    /// cache keeps that prefix and drops the rest.
    func startReading(_ tokens: [Int32], reuse: PrefixReuse, sequence: Int) -> PromptRead {
        var cached = sequences[sequence]
        let adapters = state.adapters(of: sequence)
        let common = cached.adapters == adapters ? zip(cached.tokens, tokens).prefix { $0 == $1 }.count : 0
        let batch = state.batchCapacity
        let reused = continuable(reuse.reusable(common: common, aligned: cached.alignedTokens, count: tokens.count, batch: batch), of: cached)
        // Read from a batch boundary of an aligned prefix, the prompt's whole batches are aligned
        // too; otherwise only what was aligned before the reused part stays so.
        let alignedAfter = reused <= cached.alignedTokens && reused % batch == 0
            ? tokens.count / batch * batch : min(cached.alignedTokens, reused) / batch * batch
        state.positions[sequence] = reused
        cached.tokens.removeLast(cached.tokens.count - reused)
        cached.adapters = adapters
        cached.altered = !state.hooks(of: sequence).isEmpty
        cached.alignedTokens = cached.altered ? 0 : min(cached.alignedTokens, reused)
        if let saved = cached.promptLogits, saved.tokenCount > reused || cached.altered { cached.promptLogits = nil }
        sequences[sequence] = cached
        return PromptRead(tokens: tokens, sequence: sequence, reused: reused, next: reused, alignedAfter: alignedAfter, reuse: reuse)
    }

    /// `reusable` tokens of `cached`, or none when the model keeps a recurrent state and that is
    /// not all of them: a recurrent state cannot go back, so a cache is continued whole or read again.
    func continuable(_ reusable: Int, of cached: CachedSequence) -> Int {
        !state.isRecurrent || reusable == cached.tokens.count ? reusable : 0
    }

    /// Reads the next batch of a prompt; after its last, the last token's logits are in the
    /// state's first row.
    func readBatch(_ read: inout PromptRead) throws(ModelError) {
        let batch = Array(read.tokens[read.next..<min(read.tokens.count, read.next + state.batchCapacity)])
        try forward(batch, sequence: read.sequence)
        read.next += batch.count
        if !sequences[read.sequence].altered {
            sequences[read.sequence].alignedTokens = min(read.alignedAfter, read.next / state.batchCapacity * state.batchCapacity)
            if read.isDone {
                sequences[read.sequence].promptLogits = PromptLogits(
                    tokenCount: read.tokens.count, exact: read.reuse != .any,
                    values: Array(UnsafeBufferPointer(start: state.logits, count: model.configuration.vocabularySize)))
            }
        }
    }

    func forward(_ tokens: [Int32], allLogits: Bool = false, sequence: Int = 0) throws(ModelError) {
        try model.forward(tokens, sequence: sequence, state: state, allLogits: allLogits)
        // A sequence begun (or emptied) records the adapters it is computed under; one continued
        // under others than those it recorded is never reused.
        let adapters = state.adapters(of: sequence)
        if sequences[sequence].tokens.isEmpty {
            sequences[sequence].adapters = adapters
        } else if sequences[sequence].adapters != adapters {
            sequences[sequence].altered = true
        }
        sequences[sequence].tokens += tokens
    }

    /// Runs `tokens` through the model from an empty cache, in batches, and calls `body` with the
    /// logits at each position from `firstObserved` on and the token that follows it (nothing is
    /// predicted from the last token, which only follows). Scoring is built on this. Checks for
    /// cancellation between batches.
    public func predictions(over tokens: [Int32], observingFrom firstObserved: Int,
                            _ body: (_ logits: UnsafeBufferPointer<Float>, _ next: Int) -> Void) throws(ModelError) {
        guard tokens.count <= state.contextLength else {
            throw ModelError(file: model.gguf.path, field: "context",
                             reason: "a window of \(tokens.count) tokens does not fit in the session's context of \(state.contextLength)")
        }
        let vocabulary = model.configuration.vocabularySize
        state.position = 0
        sequences[0] = CachedSequence()
        var next = 0
        while next < tokens.count - 1 {
            try Task.checkCancellation(orThrow: model.gguf.path)
            let batch = Array(tokens[next..<min(tokens.count - 1, next + state.batchCapacity)])
            let observesAny = next + batch.count > firstObserved
            try forward(batch, allLogits: observesAny)
            if observesAny {
                for offset in max(0, firstObserved - next)..<batch.count {
                    body(UnsafeBufferPointer(start: state.logits + offset * vocabulary, count: vocabulary), Int(tokens[next + offset + 1]))
                }
            }
            next += batch.count
        }
    }

    // MARK: - Benchmarks

    /// Seconds to process `tokens` as a prompt, in batches, after `context` (not timed) fills the
    /// cache from empty: llama-bench's depth.
    public func timePromptProcessing(_ tokens: [Int32], after context: [Int32] = []) throws(ModelError) -> Double {
        try fill(with: context)
        let clock = ContinuousClock()
        let started = clock.now
        guard try ingest(context + tokens, reuse: context.isEmpty ? .none : .any) != nil else {
            throw ModelError(file: model.gguf.path, field: "benchmark", reason: "cancelled")
        }
        return (clock.now - started).seconds
    }

    /// Seconds to run `tokens` one at a time, as generation does, after `context` (not timed)
    /// fills the cache from empty.
    public func timeGeneration(_ tokens: [Int32], after context: [Int32] = []) throws(ModelError) -> Double {
        try fill(with: context)
        let clock = ContinuousClock()
        let started = clock.now
        for token in tokens {
            try Task.checkCancellation(orThrow: model.gguf.path)
            try forward([token])
        }
        return (clock.now - started).seconds
    }

    /// Seconds to read `prompt` into each of `count` sequences, one after another, then to run
    /// `tokens` (the same one in each sequence at each step) in all of them as a batch decodes
    /// them, one forward pass a step: llama-batched-bench's prompt and generation times.
    public func timeParallelGeneration(prompt: [Int32], tokens: [Int32], sequences count: Int) throws(ModelError) -> (prompt: Double, generation: Double) {
        guard (1...sequenceCapacity).contains(count), !prompt.isEmpty else {
            throw ModelError(file: model.gguf.path, field: "benchmark", reason: "\(count) sequences of a \(prompt.count)-token prompt in a session of \(sequenceCapacity)")
        }
        let clock = ContinuousClock()
        let started = clock.now
        for sequence in 0..<count {
            guard try ingest(prompt, sequence: sequence) != nil else { throw ModelError(file: model.gguf.path, field: "benchmark", reason: "cancelled") }
        }
        let read = clock.now
        for token in tokens {
            try Task.checkCancellation(orThrow: model.gguf.path)
            try model.forward(decoding: (0..<count).map { ($0, token) }, state: state)
            for sequence in 0..<count { sequences[sequence].tokens.append(token) }
        }
        return ((read - started).seconds, (clock.now - read).seconds)
    }

    /// Empties the cache, then processes `context` into it.
    private func fill(with context: [Int32]) throws(ModelError) {
        sequences[0] = CachedSequence()
        state.position = 0
        if !context.isEmpty, try ingest(context) == nil {
            throw ModelError(file: model.gguf.path, field: "benchmark", reason: "cancelled")
        }
    }

    // MARK: - Looking inside

    /// Token ids for `text` (BOS added, special tokens parsed).
    public nonisolated func tokenize(_ text: String, addSpecial: Bool = true) -> [Int32] {
        model.tokenizer.encode(text, addSpecial: addSpecial)
    }

    /// The text of `ids`.
    public nonisolated func detokenize(_ ids: [Int32]) -> String {
        model.tokenizer.decode(ids)
    }

    /// Runs `tokens` through the model from an empty cache, in batches, with `hooks` looking into
    /// (or changing) every forward pass, and returns the last token's logits.
    ///
    /// - Throws: `ModelError` when the tokens are empty or do not fit, or the task is cancelled
    ///   (checked between batches).
    public func evaluate(_ tokens: [Int32], hooks: [any ForwardHook] = []) throws(ModelError) -> [Float] {
        try check(tokens, hooks: hooks)
        state.hooks = hooks
        defer { state.hooks = [] }
        guard try ingest(tokens) != nil else { throw ModelError(file: model.gguf.path, field: "task", reason: "cancelled") }
        return Array(UnsafeBufferPointer(start: state.logits, count: model.configuration.vocabularySize))
    }

    /// Refuses, before any pass runs, tokens that are empty or do not fit the context, and hooks
    /// that do not fit the model.
    func check(_ tokens: [Int32], hooks: [any ForwardHook]) throws(ModelError) {
        guard !tokens.isEmpty else {
            throw ModelError(file: model.gguf.path, field: "prompt", reason: "is empty and the vocabulary adds no BOS token")
        }
        guard tokens.count <= contextLength else {
            throw ModelError(file: model.gguf.path, field: "prompt", reason: "\(tokens.count) tokens do not fit in the context of \(contextLength)")
        }
        for hook in hooks {
            try hook.check(model)
            try hook.check(model, tokens: tokens.count)
        }
    }

    /// Refuses adapters checked against another model than the session's.
    func checkFits(_ adapters: AdapterSet) throws(ModelError) {
        guard adapters.fits(model) else {
            throw ModelError(file: model.gguf.path, field: "adapters", reason: "were checked against another model (\(adapters.modelPath ?? "none"))")
        }
    }

    /// The adapters of `pipeline` when they are not the session's: those its generation's
    /// sequence applies on its own (nil: the session's).
    ///
    /// - Throws: `ModelError` when they were checked against another model.
    func ownAdapters(of pipeline: GenerationPipeline) throws(ModelError) -> AdapterSet? {
        guard let adapters = pipeline.adapters, adapters != state.adapters else { return nil }
        try checkFits(adapters)
        return adapters
    }

    /// The `k` most likely next tokens after `prompt`, with their log-probabilities.
    public func nextTokenLogProbabilities(_ prompt: String, k: Int) throws(ModelError) -> [(id: Int32, logProbability: Float)] {
        try nextTokenLogProbabilities(tokens: model.tokenizer.encode(prompt), k: k)
    }

    /// `nextTokenLogProbabilities(_:k:)` after a prompt of token ids.
    public func nextTokenLogProbabilities(tokens: [Int32], k: Int) throws(ModelError) -> [(id: Int32, logProbability: Float)] {
        guard try ingest(tokens) != nil else { return [] }
        return LogSoftmax.top(UnsafeBufferPointer(start: state.logits, count: model.configuration.vocabularySize), k: k)
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws a `ModelError` saying the work was cancelled, when the current task is cancelled.
    static func checkCancellation(orThrow file: String) throws(ModelError) {
        if isCancelled { throw ModelError(file: file, field: "task", reason: "cancelled") }
    }
}
