import CPUBackend
import Foundation
import GGUF

/// The logit lens (nostalgebraist, 2020): each block's residual stream, at every position, read
/// through the model's final norm and output matrix as if the model ended after that block. The
/// last block's lens is the model's own prediction.
public struct LogitLens: Sendable {
    /// A token the lens predicts, with its probability.
    public struct Prediction: Sendable, Equatable {
        /// The token id.
        public let id: Int32
        /// Its probability under the block's logits.
        public let probability: Float
    }

    /// The tokens read, one position each.
    public let tokens: [Int32]
    /// By block, then position: the most likely tokens, most likely first.
    public let top: [[[Prediction]]]
    /// By tracked token id, then block, then position: that token's probability.
    public let tracked: [Int32: [[Float]]]
}

extension ModelSession {
    /// The logit lens over `tokens` (read from an empty cache, as `evaluate` does): at every block
    /// and position, the `k` most likely tokens and the probabilities of the `tracked` ones.
    ///
    /// - Throws: `ModelError` when the tokens are empty or do not fit, a tracked id is outside
    ///   the vocabulary, or the task is cancelled (checked between blocks).
    public func logitLens(_ tokens: [Int32], top k: Int, tracking tracked: [Int32] = []) throws(ModelError) -> LogitLens {
        let c = model.configuration, vocabulary = c.vocabularySize, width = c.embeddingLength
        if let outside = tracked.first(where: { $0 < 0 || Int($0) >= vocabulary }) {
            throw ModelError(file: model.gguf.path, field: "token", reason: "id \(outside) is outside the vocabulary of \(vocabulary)")
        }
        let tracked = Array(Set(tracked))
        let capture = ActivationCapture([.blockOutput])
        _ = try evaluate(tokens, hooks: [capture])
        var top: [[[LogitLens.Prediction]]] = []
        var trackedByBlock = Dictionary(uniqueKeysWithValues: tracked.map { ($0, [[Float]]()) })
        for block in 0..<c.blockCount {
            if Task.isCancelled { throw ModelError(file: model.gguf.path, field: "task", reason: "cancelled") }
            var rows = capture.take(.blockOutput, block: block)
            var blockTop: [[LogitLens.Prediction]] = []
            var blockTracked = Dictionary(uniqueKeysWithValues: tracked.map { ($0, [Float]()) })
            for start in stride(from: 0, to: tokens.count, by: state.batchCapacity) {
                let count = min(state.batchCapacity, tokens.count - start)
                rows.withUnsafeMutableBufferPointer { buffer in
                    if let base = buffer.baseAddress {
                        model.architecture.unembedding.apply(base + start * width, count: count, configuration: c, state: state)
                    }
                }
                for row in 0..<count {
                    let logits = UnsafeBufferPointer(start: state.logits + row * vocabulary, count: vocabulary)
                    blockTop.append(LogSoftmax.top(logits, k: k).map { LogitLens.Prediction(id: $0.id, probability: exp($0.logProbability)) })
                    let normalizer = LogSoftmax.logNormalizer(logits)
                    for id in tracked { blockTracked[id]?.append(exp(logits[Int(id)] - normalizer)) }
                }
            }
            top.append(blockTop)
            for id in tracked { trackedByBlock[id]?.append(blockTracked[id] ?? []) }
        }
        return LogitLens(tokens: tokens, top: top, tracked: trackedByBlock)
    }
}
