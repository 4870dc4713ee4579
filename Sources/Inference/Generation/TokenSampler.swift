/// Picks the next token from the logits (after the logit processors). A generation works on its
/// own copy, so a sampler may keep state, such as its random generator, from step to step.
public protocol TokenSampler: Sendable {
    /// The token chosen from `logits`, the scores of every token of the vocabulary.
    mutating func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32
    /// How many of the highest logits the sampler draws among (the lower id first on ties: 1
    /// for greedy, k for top-k), or nil when any token may be drawn. A grammar then checks
    /// tokens from the top down until it has that many it allows, masking the whole vocabulary
    /// only when too few of the likeliest are allowed; the draw is the same as from the masked
    /// logits.
    var candidateLimit: Int? { get }
}

extension TokenSampler {
    public var candidateLimit: Int? { nil }
}

/// Always the most likely token; the lowest id wins a tie.
public struct GreedySampler: TokenSampler {
    /// A greedy sampler.
    public init() {}

    public func sample(_ logits: UnsafeBufferPointer<Float>) -> Int32 {
        Self.argmax(logits)
    }

    public var candidateLimit: Int? { 1 }

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
