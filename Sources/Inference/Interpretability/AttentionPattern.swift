import GGUF

/// Each head's attention probabilities in one block for a prompt (llama.cpp's `kq_soft_max`):
/// `weights[head][query][key]`, each query's row over the keys before it (itself included),
/// summing to 1.
public struct AttentionPattern: Sendable {
    /// The tokens read, one position each.
    public let tokens: [Int32]
    /// The block.
    public let block: Int
    /// By head, then query position, then key position (`key ≤ query`).
    public let weights: [[[Float]]]
}

extension ModelSession {
    /// The attention pattern of block `block` over `tokens` (read from an empty cache, as
    /// `evaluate` does).
    ///
    /// - Throws: `ModelError` when the block is not one of the model's, the tokens are empty or
    ///   do not fit, or the task is cancelled.
    public func attentionPattern(_ tokens: [Int32], block: Int) throws(ModelError) -> AttentionPattern {
        let c = model.configuration
        if let misfit = c.blockMisfit(block) ?? c.attentionMisfit([block]) { throw ModelError(file: model.gguf.path, field: "attention", reason: misfit) }
        let plan = ActivationTrace(points: [.attentionProbabilities], blocks: [block], configuration: c)
        let capture = plan.capture(tokens: tokens.count)
        _ = try evaluate(tokens, hooks: [capture])
        // [1][head][query][key], the keys after each query zero.
        let values = plan.tensors(from: capture, labels: [])[.attentionProbabilities].map { Array($0.values) } ?? []
        let count = tokens.count
        let weights = (0..<c.headCount).map { head in
            tokens.indices.map { query in
                let start = (head * count + query) * count
                return Array(values[start...(start + query)])
            }
        }
        return AttentionPattern(tokens: tokens, block: block, weights: weights)
    }
}
