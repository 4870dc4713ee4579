/// Picks the next token from the logits (after the logit processors). A generation works on its
/// own copy, so a sampler may keep state, such as its random generator, from step to step.
public protocol TokenSampler: Sendable {
    /// The token chosen from `logits`, the scores of every token of the vocabulary.
    mutating func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32
    /// Whether the sampler always picks the most likely token (the lowest id of equals). A grammar
    /// then checks just that token, masking the vocabulary only when it is refused.
    var picksMostLikely: Bool { get }
}

extension TokenSampler {
    public var picksMostLikely: Bool { false }
}

/// Always the most likely token; the lowest id wins a tie.
public struct GreedySampler: TokenSampler {
    /// A greedy sampler.
    public init() {}

    public func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32 {
        Self.argmax(logits)
    }

    public var picksMostLikely: Bool { true }

    /// The index of the largest value; the lowest index wins a tie.
    public static func argmax(_ values: some Collection<Float>) -> Int32 {
        var best = 0
        var bestValue = -Float.infinity
        for (index, value) in values.enumerated() where value > bestValue {
            best = index
            bestValue = value
        }
        return Int32(best)
    }
}
