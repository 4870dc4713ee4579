import GGUF
import GenerationTypes

/// Continuous batching: the generations given to one session decode together, one token of each
/// sequence in one forward pass that reads each weight row once for all of them
/// (`LanguageModel.forward(decoding:state:)`, each row bit for bit what that token alone gives).
/// A generation waits in the inbox until a sequence is free (first come, first served), joins at
/// the next step, reads its prompt one batch a step (in the batches it would be read alone, so
/// its logits are the same) and leaves the step it ends, is stopped, or loses its reader.
extension ModelSession {
    /// Generations waiting to join a session's batch.
    struct BatchInbox {
        /// In the order they came.
        var queue: [QueuedGeneration] = []
        /// Whether `decodeBatches` is running (or about to).
        var running = false
        /// Generations that must run alone (`runsAlone`) waiting for the session: while there are
        /// any, no generation joins the batch, so it empties and they get their turn.
        var waitingAlone = 0
        /// What the batch has decoded so far.
        var statistics = BatchStatistics()
        /// The tokens each running generation's sequence holds in the cache, by sequence
        /// (`cachedTokensInUse`): a generation's entry goes before its stream ends.
        var tokensInUse: [Int: Int] = [:]
    }

    /// How many tokens the batch's passes ran, in how many passes.
    public struct BatchStatistics: Sendable, Equatable {
        /// Prompt tokens read (not those a sequence started from another's cache with).
        public var promptTokens = 0
        /// Forward passes that decoded one token of each sequence decoding then.
        public var passes = 0
        /// Tokens those passes ran.
        public var tokens = 0
        /// The most sequences one pass decoded.
        public var largest = 0
        /// How many passes decoded each number of sequences: at index k − 1, those that decoded k.
        public var passesBySequences: [Int] = []

        /// Counts a pass that decoded `sequences` sequences.
        mutating func countPass(of sequences: Int) {
            passes += 1
            tokens += sequences
            largest = max(largest, sequences)
            if passesBySequences.count < sequences { passesBySequences += Array(repeating: 0, count: sequences - passesBySequences.count) }
            passesBySequences[sequences - 1] += 1
        }
    }

    /// What the batch has decoded since the session was made.
    public nonisolated var batchStatistics: BatchStatistics { inbox.withLock { $0.statistics } }

    /// The tokens whose keys and values the generations running now hold in the cache, prompts
    /// included, as of the last step (a generation alone: its last token); 0 when none runs
    /// (what a finished generation leaves for reuse does not count).
    public nonisolated var cachedTokensInUse: Int { inbox.withLock { $0.tokensInUse.values.reduce(0, +) } }

    /// A generation to start together with others (`generate(together:)`).
    public struct GenerationRequest: Sendable {
        /// The prompt, as tokens.
        public var tokens: [Int32]
        /// What to generate: sampling, length, stop strings.
        public var options: GenerationOptions
        /// What replaces the processors, sampler and stop conditions `options` describe; its
        /// hooks look into this sequence's rows only.
        public var pipeline: GenerationPipeline?
        /// Raised, ends the generation before its next token (its summary still comes).
        public var stop: StopSignal

        /// A request for the prompt `tokens`.
        public init(tokens: [Int32], options: GenerationOptions = GenerationOptions(), pipeline: GenerationPipeline? = nil, stop: StopSignal = StopSignal()) {
            self.tokens = tokens
            self.options = options
            self.pipeline = pipeline
            self.stop = stop
        }
    }

    /// Starts `requests` together: they join the batch in their order, at one step when there
    /// are sequences free for them (the samples of one prompt, a batch of prompts), and each
    /// streams as `generate(tokens:options:pipeline:stop:startingFrom:)` does. A request that
    /// must run alone (speculative decoding) is refused in its stream.
    public nonisolated func generate(together requests: [GenerationRequest]) -> [AsyncThrowingStream<TokenEvent, any Error>] {
        var generations: [QueuedGeneration] = []
        let streams = requests.map { request in
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: TokenEvent.self)
            do {
                let pipeline = try request.pipeline ?? GenerationPipeline(options: request.options, model: model)
                guard !Self.runsAlone(options: request.options, pipeline: pipeline) else {
                    throw ModelError(file: model.gguf.path, field: "batch", reason: "speculative decoding runs one generation at a time")
                }
                let generation = QueuedGeneration(prompt: .tokens(request.tokens), options: request.options, pipeline: pipeline, stop: request.stop,
                                                  inherited: nil, lease: nil, continuation: continuation)
                continuation.onTermination = { _ in generation.abandoned.raise() }
                generations.append(generation)
            } catch {
                continuation.finish(throwing: error)
            }
            return stream
        }
        enqueue(generations)
        return streams
    }

    /// One sequence of the batch: the generation it runs, and where it is.
    private struct BatchedSequence {
        let generation: QueuedGeneration
        /// Its place in the cache.
        let sequence: Int
        /// Its prompt's tokens.
        let prompt: [Int32]
        enum Phase {
            /// Waiting for its turn to read its prompt, as `reuse` allows.
            case waiting(reuse: PrefixReuse)
            /// Reading its prompt.
            case reading(PromptRead)
            /// Decoding: `next` is the token to run next.
            case decoding(next: Int32)
        }
        var phase: Phase
        /// The generation's token and text side, from when its prompt is read: kept apart from
        /// `phase` so each draw changes it in place (its buffers are never copied).
        var progress: GenerationProgress?
    }

    /// Queues `generations` for the batch, in order, starting the batch if it is not running.
    nonisolated func enqueue(_ generations: [QueuedGeneration]) {
        guard !generations.isEmpty else { return }
        let start = inbox.withLock { inbox in
            inbox.queue += generations
            guard !inbox.running else { return false }
            inbox.running = true
            return true
        }
        if start { Task { await self.decodeBatches() } }
    }

    /// Starts the batch again, after a generation ran alone, when generations wait for it.
    func resumeBatches() {
        let start = inbox.withLock { inbox in
            guard !inbox.running, !inbox.queue.isEmpty else { return false }
            inbox.running = true
            return true
        }
        if start { Task { self.decodeBatches() } }
    }

    /// Runs the batch until no generation is left in it or waiting: each step admits waiting
    /// generations into free sequences, reads one batch of the prompt of the earliest one still
    /// reading, then runs the next token of every decoding sequence in one forward pass.
    func decodeBatches() {
        var active: [BatchedSequence] = []
        while true {
            let busy = active.count, capacity = sequenceCapacity
            let admitted = inbox.withLock { inbox -> [QueuedGeneration] in
                let count = inbox.waitingAlone > 0 ? 0 : min(inbox.queue.count, capacity - busy)
                let taken = Array(inbox.queue.prefix(count))
                inbox.queue.removeFirst(count)
                if busy == 0 && taken.isEmpty { inbox.running = false }
                return taken
            }
            if active.isEmpty && admitted.isEmpty { return }
            for generation in admitted {
                if let joined = admit(generation, besides: active) { active.append(joined) }
            }
            step(&active)
            let inUse = active.map { ($0.sequence, sequences[$0.sequence].tokens.count) }
            inbox.withLock { inbox in
                for (sequence, count) in inUse { inbox.tokensInUse[sequence] = count }
            }
        }
    }

    /// Gives `generation` a free sequence — the one whose cache shares most of its prompt — where
    /// it waits its turn to read its prompt; nil (the generation ended) when the prompt or its
    /// hooks or adapters are refused. A generation with hooks reads its prompt from position 0 (as
    /// alone); its hooks, and adapters of its own, apply to its sequence's rows until it ends (it
    /// reuses only a cache computed under the same adapters).
    private func admit(_ generation: QueuedGeneration, besides active: [BatchedSequence]) -> BatchedSequence? {
        let tokens = generation.promptTokens(model.tokenizer)
        let hooks = generation.pipeline.hooks
        let ownAdapters: AdapterSet?
        do {
            try check(tokens, hooks: hooks)
            ownAdapters = try self.ownAdapters(of: generation.pipeline)
        } catch {
            generation.fail(error)
            return nil
        }
        let adapters = ownAdapters ?? state.adapters
        let used = Set(active.map(\.sequence))
        let shared = sequences.map { $0.altered || $0.adapters != adapters ? 0 : zip($0.tokens, tokens).prefix { $0 == $1 }.count }
        // The free sequence sharing most, the first of equals.
        guard let sequence = (0..<sequenceCapacity).filter({ !used.contains($0) }).max(by: { (shared[$0], $1) < (shared[$1], $0) }) else {
            generation.fail(ModelError(file: model.gguf.path, field: "batch", reason: "no free sequence"))
            return nil
        }
        let options = generation.options
        if let ownAdapters { state.useAdapters(ownAdapters, for: sequence) }
        if hooks.isEmpty, let inherited = generation.inherited, options.reusesCachedPrefix { adopt(inherited, for: tokens, sequence: sequence) }
        let reuse: PrefixReuse = !hooks.isEmpty || sequences[sequence].altered ? .none : options.reusesCachedPrefix ? .any : .exact
        if !hooks.isEmpty { state.sequenceHooks[sequence] = hooks }
        return BatchedSequence(generation: generation, sequence: sequence, prompt: tokens, phase: .waiting(reuse: reuse), progress: nil)
    }

    /// One step of the batch: the sequences asked to stop end; the earliest waiting or reading
    /// its prompt reads one batch of it (and draws its first token once it has read it all) —
    /// before that, those whose whole prompt another sequence has just read start from its cache
    /// and logits, without a pass; then every decoding sequence runs its next token, in one
    /// forward pass, and draws the one after.
    private func step(_ active: inout [BatchedSequence]) {
        active = active.filter { batched in
            guard batched.generation.shouldStop else { return true }
            if var progress = batched.progress {
                progress.cancel()
                end(batched, progress.finished())
            } else {
                end(batched, GenerationProgress.cancelled(promptTokens: batched.prompt.count))
            }
            return false
        }
        readPrompt(&active)
        let decoding = active.indices.compactMap { index -> (index: Int, token: Int32)? in
            if case .decoding(let next) = active[index].phase { (index, next) } else { nil }
        }
        guard !decoding.isEmpty else { return }
        inbox.withLock { $0.statistics.countPass(of: decoding.count) }
        var ended: Set<Int> = []
        do {
            try model.forward(decoding: decoding.map { (active[$0.index].sequence, $0.token) }, state: state)
            let vocabulary = model.configuration.vocabularySize
            for (row, step) in decoding.enumerated() {
                sequences[active[step.index].sequence].tokens.append(step.token)
                let logits = UnsafeBufferPointer(start: state.logits + row * vocabulary, count: vocabulary)
                if !draw(&active[step.index], from: logits) { ended.insert(step.index) }
            }
        } catch {
            for (index, _) in decoding { end(active[index], failing: error) }
            ended = Set(decoding.map(\.index))
        }
        if !ended.isEmpty { active = active.indices.filter { !ended.contains($0) }.map { active[$0] } }
    }

    /// The prompt part of a step: the earliest sequence waiting or reading reads one batch, after
    /// the waiting ones before it whose prompt is cached whole have started from it.
    private func readPrompt(_ active: inout [BatchedSequence]) {
        var index = 0
        while index < active.count {
            let sequence = active[index].sequence, prompt = active[index].prompt
            var read: PromptRead
            switch active[index].phase {
            case .decoding:
                index += 1
                continue
            case .waiting(let reuse):
                if let logits = startFromCachedPrompt(prompt, reuse: reuse, sequence: sequence) {
                    let going = logits.withUnsafeBufferPointer {
                        startDecoding(&active[index], after: prompt, reused: prompt.count, readFrom: .now, logits: $0)
                    }
                    if going { index += 1 } else { active.remove(at: index) }
                    continue
                }
                copyLongestPrefix(of: prompt, reuse: reuse, into: sequence)
                read = startReading(prompt, reuse: reuse, sequence: sequence)
            case .reading(let reading):
                read = reading
            }
            let before = read.next
            do {
                try readBatch(&read)
                inbox.withLock { $0.statistics.promptTokens += read.next - before }
            } catch {
                end(active[index], failing: error)
                active.remove(at: index)
                return
            }
            guard read.isDone else {
                active[index].phase = .reading(read)
                return
            }
            let logits = UnsafeBufferPointer(start: state.logits, count: model.configuration.vocabularySize)
            if !startDecoding(&active[index], after: prompt, reused: read.reused, readFrom: read.started, logits: logits) {
                active.remove(at: index)
            }
            return
        }
    }

    /// When a sequence's cache holds all of `prompt` with the logits after it (its last prompt
    /// read, as `reuse` allows), puts them in `sequence` — copying the keys and values when that
    /// is another — and returns the logits: the samples of one prompt read it once.
    private func startFromCachedPrompt(_ prompt: [Int32], reuse: PrefixReuse, sequence: Int) -> [Float]? {
        let adapters = state.adapters(of: sequence)
        guard reuse != .none, let donor = sequences.indices.first(where: { index in
            // A recurrent state is only where its sequence is: after the prompt, nothing more.
            guard let saved = sequences[index].promptLogits, !sequences[index].altered, sequences[index].adapters == adapters, saved.tokenCount == prompt.count,
                  saved.exact || reuse == .any, !state.isRecurrent || sequences[index].tokens.count == prompt.count else { return false }
            return sequences[index].tokens.starts(with: prompt)
        }), let saved = sequences[donor].promptLogits else { return nil }
        if donor != sequence { state.copyCache(from: donor, to: sequence, count: prompt.count) }
        state.positions[sequence] = prompt.count
        sequences[sequence] = CachedSequence(tokens: prompt, altered: false, alignedTokens: min(sequences[donor].alignedTokens, prompt.count), adapters: adapters,
                                             promptLogits: saved)
        return saved.values
    }

    /// Copies into `sequence` the prefix of `prompt` another sequence's cache holds, when that
    /// gives more of it than `sequence`'s own (as `reuse` counts them): a system prompt shared
    /// by several requests is read once.
    private func copyLongestPrefix(of prompt: [Int32], reuse: PrefixReuse, into sequence: Int) {
        let adapters = state.adapters(of: sequence)
        func reusable(_ index: Int) -> Int {
            let cached = sequences[index]
            guard !cached.altered, cached.adapters == adapters else { return 0 }
            let common = zip(cached.tokens, prompt).prefix { $0 == $1 }.count
            return continuable(reuse.reusable(common: common, aligned: cached.alignedTokens, count: prompt.count, batch: state.batchCapacity), of: cached)
        }
        guard let donor = sequences.indices.max(by: { reusable($0) < reusable($1) }), donor != sequence else { return }
        let count = reusable(donor)
        guard count > reusable(sequence) else { return }
        state.copyCache(from: donor, to: sequence, count: count)
        sequences[sequence] = CachedSequence(tokens: Array(prompt.prefix(count)), altered: false,
                                             alignedTokens: min(sequences[donor].alignedTokens, count), adapters: adapters)
    }

    /// Starts decoding `batched` after its `prompt` (`reused` of its tokens from the cache, the
    /// rest read from `readFrom` on): draws its first token from `logits`. False when the
    /// generation has ended (and been finished).
    private func startDecoding(_ batched: inout BatchedSequence, after prompt: [Int32], reused: Int, readFrom: ContinuousClock.Instant,
                               logits: UnsafeBufferPointer<Float>) -> Bool {
        let generation = batched.generation
        batched.progress = GenerationProgress(promptTokens: prompt, reused: reused, options: generation.options, pipeline: generation.pipeline,
                                              model: model, asked: generation.arrived, readFrom: readFrom)
        return draw(&batched, from: logits)
    }

    /// Draws a decoding sequence's next token from `logits`; false when its generation has ended
    /// (and been finished).
    private func draw(_ batched: inout BatchedSequence, from logits: UnsafeBufferPointer<Float>) -> Bool {
        let generation = batched.generation
        let contextFull = state.positions[batched.sequence] >= state.contextLength
        // Counted before the token is handed on: whoever reads it finds the cache it holds in use.
        let cached = sequences[batched.sequence].tokens.count
        inbox.withLock { $0.tokensInUse[batched.sequence] = cached }
        do {
            guard let next = try batched.progress?.advance(logits: logits, contextFull: contextFull, shouldStop: { generation.shouldStop },
                                                           emit: generation.emit) else {
                if let progress = batched.progress { end(batched, progress.finished()) }
                return false
            }
            batched.phase = .decoding(next: next)
            return true
        } catch {
            end(batched, failing: error)
            return false
        }
    }

    /// Ends a sequence's generation with `summary`, its tokens no longer counted in use first, so
    /// whoever reads the end of its stream finds them free.
    private func end(_ batched: BatchedSequence, _ summary: GenerationSummary) {
        inbox.withLock { $0.tokensInUse[batched.sequence] = nil }
        state.sequenceHooks[batched.sequence] = nil
        state.useAdapters(nil, for: batched.sequence)
        batched.generation.finish(summary)
    }

    /// Ends a sequence's generation with `error`, its tokens no longer counted in use first.
    private func end(_ batched: BatchedSequence, failing error: any Error) {
        inbox.withLock { $0.tokensInUse[batched.sequence] = nil }
        state.sequenceHooks[batched.sequence] = nil
        state.useAdapters(nil, for: batched.sequence)
        batched.generation.fail(error)
    }
}
