import Executors
import Foundation
import GGUF
import GenerationTypes

/// One conversation with a model: owns a KV cache and sampler state, so a model's session is never
/// used from two threads at once. Its compute runs on a dedicated thread (its own executor), so
/// long inference never occupies Swift's cooperative pool. Sessions of one file share its weights.
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
    /// The tokens whose keys and values are in the cache, in order.
    var cachedTokens: [Int32] = []
    /// Whether hooks may have changed what the cache holds: such a cache is never reused, and a
    /// generation with hooks reuses none, so every prefix reused was computed as a plain run
    /// would.
    var cacheHooked = false
    /// How many of the cached tokens were read as whole prompt batches from position 0: a prompt
    /// that starts with them reuses them exactly, its logits bit for bit a fresh read's.
    var alignedTokens = 0

    /// The dedicated thread's executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Creates a session with a cache of `contextLength` tokens (default and cap: the model's
    /// context length) whose matrix products use `threads` threads.
    /// `activations` chooses exact F32 activations or llama.cpp's faster 8-bit ones for quantized
    /// weights; `cacheType` an F32 or (half the memory, llama.cpp's default) F16 KV cache.
    public init(model: LanguageModel, contextLength: Int? = nil, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
                batchSize: Int = 64, activations: ActivationPrecision = .quantized, cacheType: KVCacheType = .f32) {
        self.model = model
        executor = ThreadExecutor(name: "lumen-session")
        let context = max(1, min(contextLength ?? model.configuration.contextLength, model.configuration.contextLength))
        let state = InferenceState(configuration: model.configuration, contextLength: context, batchCapacity: max(1, batchSize), threads: max(1, threads),
                                   activations: activations, cacheType: cacheType)
        self.state = state
        self.contextLength = context
        stateByteCount = state.byteCount
        self.cacheType = cacheType
        bytesPerCachedToken = state.bytesPerCachedToken
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

        /// The bytes the keys and values take (copies of a prefix share them).
        public var byteCount: Int { contents.count }
    }

    /// A copy of what the cache holds now.
    public func cachedPrefix() -> CachedPrefix {
        let tokens = cacheHooked ? [] : cachedTokens
        return CachedPrefix(tokens: tokens, contents: state.cacheContents(count: tokens.count), cacheType: state.cacheType,
                            alignedTokens: cacheHooked ? 0 : alignedTokens, batchCapacity: state.batchCapacity)
    }

    /// Puts `saved` (a `cachedPrefix()` of a session of this model, or a `SavedState`) into the
    /// cache: a prompt that starts with its tokens then reuses them (exactly their whole batches
    /// read as a prompt, or all of them for a conversation).
    public func restore(_ saved: CachedPrefix) {
        precondition(saved.cacheType == state.cacheType && saved.tokens.count <= contextLength, "a state of another cache")
        state.restoreCache(saved.contents, count: saved.tokens.count)
        cachedTokens = saved.tokens
        cacheHooked = false
        alignedTokens = saved.batchCapacity == state.batchCapacity ? saved.alignedTokens : 0
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
        guard let reused = try ingest(tokens, reuse: cacheHooked ? .none : inherited == nil ? .exact : .any) else {
            throw ModelError(file: model.gguf.path, field: "task", reason: "cancelled")
        }
        return reused
    }

    /// Copies `inherited` into the cache when it shares a longer prefix with `tokens` than the
    /// cache does.
    private func adopt(_ inherited: CachedPrefix, for tokens: [Int32]) {
        func common(_ cached: [Int32]) -> Int { zip(cached, tokens).prefix { $0 == $1 }.count }
        guard inherited.cacheType == state.cacheType, inherited.tokens.count <= contextLength,
              common(inherited.tokens) > (cacheHooked ? 0 : common(cachedTokens)) else { return }
        restore(inherited)
    }

    /// A prompt as text (tokenized on the session's thread) or as tokens.
    enum Prompt: Sendable {
        case text(String)
        case tokens([Int32])
    }

    /// The events of a generation produced on this session's thread; `lease`, when given, is
    /// released as soon as the generation ends.
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
        let producer = Task {
            await self.produce(prompt, options: options, pipeline: parts, stop: stop, inherited: inherited, lease: lease, into: continuation)
        }
        continuation.onTermination = { _ in producer.cancel() }
        return stream
    }

    /// Runs the generation, giving `lease` back before the stream ends, so whoever reads the
    /// end finds the session free.
    private func produce(_ prompt: Prompt, options: GenerationOptions, pipeline: GenerationPipeline, stop: StopSignal, inherited: CachedPrefix?,
                         lease: SessionLease?, into continuation: AsyncThrowingStream<TokenEvent, any Error>.Continuation) {
        let promptTokens = switch prompt {
        case .text(let text): model.tokenizer.encode(text)
        case .tokens(let tokens): tokens
        }
        if let inherited, options.reusesCachedPrefix { adopt(inherited, for: promptTokens) }
        do {
            let summary = try run(promptTokens: promptTokens, options: options, pipeline: pipeline, stop: stop) { token in
                continuation.yield(.token(token))
            }
            lease?.release()
            continuation.yield(.finished(summary))
            continuation.finish()
        } catch {
            lease?.release()
            continuation.finish(throwing: error)
        }
    }

    /// Runs a generation on this actor's thread, handing each token to `emit`. The pipeline's
    /// hooks look into every forward pass of it, the prompt's included.
    func run(promptTokens: [Int32], options: GenerationOptions, pipeline: GenerationPipeline, stop: StopSignal,
             emit: (GeneratedToken) -> Void) throws(ModelError) -> GenerationSummary {
        func shouldStop() -> Bool { Task.isCancelled || stop.isRaised }
        let clock = ContinuousClock()
        let started = clock.now
        try check(promptTokens, hooks: pipeline.hooks)
        state.hooks = pipeline.hooks
        defer { state.hooks = [] }
        var summary = GenerationSummary(promptTokens: promptTokens.count, generatedTokens: 0, timeToFirstToken: 0,
                                        promptTokensPerSecond: 0, generationTokensPerSecond: 0, finishReason: .length)
        let reuse: PrefixReuse = !pipeline.hooks.isEmpty || cacheHooked ? .none : options.reusesCachedPrefix ? .any : .exact
        guard let reused = try ingest(promptTokens, reuse: reuse, stop: stop) else {
            summary.finishReason = .cancelled
            return summary
        }
        summary.reusedPromptTokens = reused
        // A draft model reads the prompt as part of reading it.
        var speculator = speculator(for: options, pipeline: pipeline, prompt: promptTokens, stop: stop)
        speculator?.prepare(prompt: promptTokens)
        let promptDone = clock.now
        summary.promptTokensPerSecond = Double(promptTokens.count - summary.reusedPromptTokens) / max(1e-9, (promptDone - started).seconds)

        var steps = TokenSteps(pipeline: pipeline, prompt: promptTokens, forcedTokens: options.forcedTokens, trie: model.tokenTrie)
        var textStream = TextStream(stopStrings: options.stopStrings)
        var firstTokenTime: ContinuousClock.Instant?
        // The drafts being verified: the cache holds them after the position `base`, and `row`
        // is the row of logits the next token is drawn from (the drafts before it accepted).
        var verifying: (drafts: [Int32], base: Int, row: Int)?
        defer {
            if let verifying { rewindDrafts(to: verifying.base + verifying.row + 1) }
        }
        let vocabulary = model.configuration.vocabularySize
        while summary.generatedTokens < options.maxTokens {
            if shouldStop() {
                summary.finishReason = .cancelled
                break
            }
            let logits = UnsafeBufferPointer(start: state.logits + (verifying?.row ?? 0) * vocabulary, count: vocabulary)
            let step = summary.generatedTokens
            let recorded = step < options.recordedLogits ? Array(logits) : nil
            guard let (token, logProbability) = steps.draw(from: logits) else {
                throw ModelError(file: model.gguf.path, field: "grammar",
                                 reason: "no token of the vocabulary can continue the output as the grammar requires, after \(summary.generatedTokens) tokens")
            }
            summary.generatedTokens += 1
            if firstTokenTime == nil { firstTokenTime = clock.now }
            if let reason = steps.finishReason(at: token) {
                emit(GeneratedToken(id: token, text: textStream.finish().text, logProbability: logProbability, logits: recorded))
                summary.finishReason = reason
                break
            }
            var (text, stopped) = textStream.append(model.tokenizer.piece(token))
            let cancelled = shouldStop()
            // The token just sampled is the last one when the cache has no room to run it.
            let contextFull = (verifying.map { $0.base + $0.row + 1 } ?? state.position) >= state.contextLength
            let exhausted = summary.generatedTokens >= options.maxTokens || contextFull || steps.outputComplete
            if !stopped && (cancelled || exhausted) {
                let (tail, stoppedInTail) = textStream.finish()
                text += tail
                stopped = stoppedInTail
            }
            emit(GeneratedToken(id: token, text: text, logProbability: logProbability, logits: recorded))
            if stopped || cancelled || exhausted {
                summary.finishReason = stopped ? .stop : cancelled ? .cancelled : steps.outputComplete ? .eos : contextFull ? .context : .length
                break
            }
            let next = steps.next(after: token)
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
            let drafts = speculator?.draft(after: cachedTokens + [next],
                                           room: min(options.maxTokens - summary.generatedTokens - 1, state.contextLength - state.position - 1,
                                                     state.batchCapacity - 1)) ?? []
            let base = state.position
            if drafts.isEmpty {
                try forward([next])
            } else {
                // Verified as decoding them one by one would compute them, bit for bit.
                state.scratch.tokenByToken = true
                defer { state.scratch.tokenByToken = false }
                try forward([next] + drafts, allLogits: true)
                verifying = (drafts, base, 0)
            }
        }
        // The drafts past the last token drawn were never checked.
        if let verifying { speculator?.verified(verifying.row, accepted: verifying.row) }
        summary.draftedTokens = speculator?.drafted ?? 0
        summary.acceptedTokens = speculator?.accepted ?? 0
        let finished = clock.now
        let first = firstTokenTime ?? finished
        summary.timeToFirstToken = (first - started).seconds
        if summary.generatedTokens > 1 {
            summary.generationTokensPerSecond = Double(summary.generatedTokens - 1) / max(1e-9, (finished - first).seconds)
        }
        return summary
    }

    /// The speculative decoding `options` ask for, unless hooks look into the forward passes
    /// (they would see drafts that are thrown away) or tokens are forced.
    private func speculator(for options: GenerationOptions, pipeline: GenerationPipeline, prompt: [Int32], stop: StopSignal) -> Speculator? {
        guard let speculation = options.speculation, pipeline.hooks.isEmpty, options.forcedTokens.isEmpty else { return nil }
        let draftMax = min(speculation.draftMax, state.batchCapacity - 1)
        if let draft = pipeline.draftModel {
            let context = min(contextLength, prompt.count + min(options.maxTokens, contextLength) + draftMax + 1)
            let drafter = DraftModel(model: draft, contextLength: context, pool: state.pool, probabilityMin: speculation.draftProbabilityMin, stop: stop)
            return Speculator(drafter: drafter, draftMax: draftMax)
        }
        return speculation.lookupNgram.map { Speculator(drafter: PromptLookup(ngram: $0), draftMax: draftMax) }
    }

    /// Drops the drafts past `position` from the cache: their keys and values are overwritten
    /// by the next forward pass.
    private func rewindDrafts(to position: Int) {
        state.position = position
        cachedTokens.removeLast(max(0, cachedTokens.count - position))
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
    }

    /// Brings the cache to hold `tokens`, processing them in batches after the prefix `reuse`
    /// allows; the logits of the last token end up in the state. Returns how many tokens were
    /// reused, or nil if cancelled between batches (the cache then holds the batches done, and
    /// stays consistent).
    private func ingest(_ tokens: [Int32], reuse: PrefixReuse = .none, stop: StopSignal? = nil) throws(ModelError) -> Int? {
        let common = zip(cachedTokens, tokens).prefix { $0 == $1 }.count
        let batch = state.batchCapacity
        let reused = switch reuse {
        case .none: 0
        case .exact: min(common, alignedTokens, tokens.count - 1) / batch * batch
        case .any: min(common, tokens.count - 1)
        }
        // Read from a batch boundary of an aligned prefix, the prompt's whole batches are aligned
        // too; otherwise only what was aligned before the reused part stays so.
        let alignedAfter = reused <= alignedTokens && reused % batch == 0 ? tokens.count / batch * batch : min(alignedTokens, reused) / batch * batch
        state.position = reused
        cachedTokens.removeLast(cachedTokens.count - reused)
        cacheHooked = !state.hooks.isEmpty
        alignedTokens = cacheHooked ? 0 : min(alignedTokens, reused)
        var next = reused
        while next < tokens.count {
            if Task.isCancelled || stop?.isRaised == true { return nil }
            let batch = Array(tokens[next..<min(tokens.count, next + state.batchCapacity)])
            try forward(batch)
            next += batch.count
            if !cacheHooked { alignedTokens = min(alignedAfter, next / state.batchCapacity * state.batchCapacity) }
        }
        return reused
    }

    func forward(_ tokens: [Int32], allLogits: Bool = false) throws(ModelError) {
        try model.forward(tokens, state: state, allLogits: allLogits)
        cachedTokens += tokens
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
        cachedTokens = []
        cacheHooked = false
        alignedTokens = 0
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

    /// Empties the cache, then processes `context` into it.
    private func fill(with context: [Int32]) throws(ModelError) {
        cachedTokens = []
        alignedTokens = 0
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
    private func check(_ tokens: [Int32], hooks: [any ForwardHook]) throws(ModelError) {
        guard !tokens.isEmpty else {
            throw ModelError(file: model.gguf.path, field: "prompt", reason: "is empty and the vocabulary adds no BOS token")
        }
        guard tokens.count <= contextLength else {
            throw ModelError(file: model.gguf.path, field: "prompt", reason: "\(tokens.count) tokens do not fit in the context of \(contextLength)")
        }
        for hook in hooks { try hook.check(model) }
    }

    /// The `k` most likely next tokens after `prompt`, with their log-probabilities.
    public func nextTokenLogProbabilities(_ prompt: String, k: Int) throws(ModelError) -> [(id: Int32, logProbability: Float)] {
        guard try ingest(model.tokenizer.encode(prompt)) != nil else { return [] }
        return LogSoftmax.top(UnsafeBufferPointer(start: state.logits, count: model.configuration.vocabularySize), k: k)
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws a `ModelError` saying the work was cancelled, when the current task is cancelled.
    static func checkCancellation(orThrow file: String) throws(ModelError) {
        if isCancelled { throw ModelError(file: file, field: "task", reason: "cancelled") }
    }
}
