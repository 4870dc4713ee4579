import Inference
import Scoring

/// A model's scores of a text, for `perplexity`: each scored token's log-probability, their
/// perplexity, and how the text was scored.
struct PerplexityScores: Sendable {
    /// The log-probability of each scored token, in order.
    let logProbabilities: [Float]
    /// Their perplexity.
    let estimate: Estimate
    /// The tokens each was scored within: the window, or the whole text.
    let context: Int
    /// How the text was scored, for the description: its windows, or by a server.
    let method: String?
}
