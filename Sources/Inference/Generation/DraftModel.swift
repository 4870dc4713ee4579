import Foundation

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

    /// A drafter with a cache of `contextLength` tokens, its products on `pool` (the target's:
    /// the two never run at once).
    init(model: LanguageModel, contextLength: Int, pool: MatrixPool, probabilityMin: Float) {
        self.model = model
        state = InferenceState(configuration: model.configuration, contextLength: contextLength, batchCapacity: 64, threads: pool.threads,
                               sharedPool: pool)
        self.probabilityMin = probabilityMin
    }

    /// Brings the cache to hold `context` (reusing what it shares, reading the rest in batches)
    /// and drafts greedily. Proposes nothing when cancelled, or when the context does not fit.
    func draft(after context: [Int32], count: Int) -> [Int32] {
        guard count > 0, !context.isEmpty, context.count + count <= state.contextLength else { return [] }
        // The last token always runs again, for its logits.
        let common = min(zip(cached, context).prefix { $0 == $1 }.count, context.count - 1)
        state.position = common
        cached.removeLast(cached.count - common)
        var drafts: [Int32] = []
        do {
            var next = common
            while next < context.count {
                if Task.isCancelled { return [] }
                let batch = Array(context[next..<min(context.count, next + state.batchCapacity)])
                // A few tokens (the last verification's) cost less one by one than as a batch,
                // which would widen or restore every weight row.
                state.scratch.tokenByToken = batch.count <= Self.tokenByTokenLimit
                try model.forward(batch, state: state)
                state.scratch.tokenByToken = false
                cached += batch
                next += batch.count
            }
            let vocabulary = model.configuration.vocabularySize
            while drafts.count < count {
                let logits = UnsafeBufferPointer(start: state.logits, count: vocabulary)
                guard let token = LogSoftmax.highest(logits, count: 1).first,
                      logits[Int(token)] - LogSoftmax.logNormalizer(logits) >= log(probabilityMin) else { break }
                drafts.append(token)
                guard drafts.count < count else { break }
                try model.forward([token], state: state)
                cached.append(token)
            }
        } catch {
            // The cache's position says what it holds; `cached` follows it.
            cached.removeLast(max(0, cached.count - state.position))
        }
        return drafts
    }
}
