import CPUBackend
import Foundation
import GGUF
import GenerationTypes

/// Drafts with a smaller model of the same vocabulary (llama.cpp's `llama-speculative`): its own
/// cache follows the context, and it proposes its likeliest tokens one by one, stopping at one
/// it finds less likely than `probabilityMin`. A deterministic draft makes the standard
/// acceptance rule the plain one: a draft is accepted when it is the token the target draws.
final class DraftModel: Drafter {
    private let model: LanguageModel
    private let state: InferenceState
    private let probabilityMin: Float
    /// The tokens in the draft model's cache, in order.
    private var cached: [Int32] = []
    /// Each draft runs the draft model, even one it declines.
    var asksCost: Bool { true }
    /// Up to this many tokens to catch up on are run one by one.
    static let tokenByTokenLimit = 4
    /// The most tokens caught up on for each token that may be drafted.
    static let catchUpPerDraft = 8

    /// Raised when the generation is to stop: drafting stops too, between forward passes.
    private let stop: StopSignal

    /// A drafter with a cache of `contextLength` tokens, its products on the threads of
    /// `target` (the target's state: the two never run at once), that stops drafting when
    /// `stop` is raised.
    init(model: LanguageModel, contextLength: Int, sharingThreadsOf target: InferenceState, probabilityMin: Float, stop: StopSignal) {
        self.model = model
        self.stop = stop
        state = InferenceState(model: model, contextLength: contextLength, batchCapacity: 64, threads: target.backend.threads,
                               sharing: target)
        self.probabilityMin = probabilityMin
    }

    /// Drafts greedily after `context`, once the cache holds it (`catchUp`). Proposes nothing
    /// when cancelled, when the context does not fit, or when there is too much to catch up on
    /// for the tokens that may be drafted.
    func draft(after context: [Int32], count: Int) -> [Int32] {
        guard count > 0, !context.isEmpty, context.count + count <= state.contextLength else { return [] }
        let common = common(with: context)
        // Catching up on many tokens (after long pauses, where drafts kept failing) to draft a
        // few costs more than the drafts can save: declined, so the pauses grow.
        guard context.count - common <= Self.catchUpPerDraft * count else { return [] }
        var drafts: [Int32] = []
        do {
            guard try catchUp(to: context, from: common) else { return [] }
            let vocabulary = model.configuration.vocabularySize
            while drafts.count < count {
                let logits = UnsafeBufferPointer(start: state.logits, count: vocabulary)
                guard let token = LogSoftmax.highest(logits, count: 1).first,
                      logits[Int(token)] - LogSoftmax.logNormalizer(logits) >= log(probabilityMin) else { break }
                drafts.append(token)
                guard drafts.count < count, !stopped else { break }
                try model.forward([token], state: state)
                cached.append(token)
            }
        } catch {
            // The cache's position says what it holds; `cached` follows it.
            cached.removeLast(max(0, cached.count - state.position))
        }
        return drafts
    }

    /// Reads the prompt ahead of the first draft, while the target reads it too.
    func prepare(prompt: [Int32]) {
        guard !prompt.isEmpty, prompt.count < state.contextLength else { return }
        do { _ = try catchUp(to: prompt, from: common(with: prompt)) } catch { cached.removeLast(max(0, cached.count - state.position)) }
    }

    /// Whether the generation is cancelled or stopped.
    private var stopped: Bool { Task.isCancelled || stop.isRaised }

    /// How many of `context`'s tokens the cache holds (never the last: it runs again for its
    /// logits).
    private func common(with context: [Int32]) -> Int {
        min(zip(cached, context).prefix { $0 == $1 }.count, context.count - 1)
    }

    /// Brings the cache to hold `context`, reusing its first `common` tokens (`common(with:)`)
    /// and reading the rest in batches; the logits after its last token end up in the state.
    /// False when cancelled.
    private func catchUp(to context: [Int32], from common: Int) throws(ModelError) -> Bool {
        state.position = common
        cached.removeLast(cached.count - common)
        var next = common
        while next < context.count {
            if stopped { return false }
            let batch = Array(context[next..<min(context.count, next + state.batchCapacity)])
            // A few tokens (the last verification's) cost less one by one than as a batch,
            // which would widen or restore every weight row.
            state.backend.tokenByToken = batch.count <= Self.tokenByTokenLimit
            defer { state.backend.tokenByToken = false }
            try model.forward(batch, state: state)
            cached += batch
            next += batch.count
        }
        return true
    }
}
