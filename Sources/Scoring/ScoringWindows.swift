/// Which tokens of a text a model scores, and with how much context: the windows a perplexity or
/// a comparison of two models evaluates, each from an empty cache.
///
/// `chunks` is llama-perplexity's method, so its figures compare with llama.cpp's: the tokens are
/// cut into windows of `context` tokens (a tail shorter than one window is left out), the first
/// token of each window becomes BOS when the vocabulary adds one, and only the second half of
/// each window is scored, so every scored token has at least half a window of context.
/// `whole` scores every token after the first of one window.
public struct ScoringWindows: Sendable, Equatable {
    /// One window: `count` tokens from `start`, scoring the predictions made at positions
    /// `firstScored` through `count - 2` of the window (each predicts the token after it).
    public struct Window: Sendable, Equatable {
        /// The index of the window's first token in the text's tokens.
        public let start: Int
        /// The number of tokens in the window.
        public let count: Int
        /// The first position (within the window) whose prediction is scored.
        public let firstScored: Int

        /// How many tokens of the window are scored.
        public var scoredCount: Int { count - 1 - firstScored }
    }

    /// The windows, in the order of the text.
    public let windows: [Window]
    /// Whether the first token of each window is replaced by BOS.
    public let startsWithBOS: Bool

    /// The number of tokens scored over all windows.
    public var scoredCount: Int { windows.reduce(0) { $0 + $1.scoredCount } }

    /// llama-perplexity's windows over `tokenCount` tokens: `tokenCount / context` windows of
    /// `context` tokens, scored from `context / 2`. Needs at least two windows' worth of tokens,
    /// as llama-perplexity does.
    public static func chunks(tokenCount: Int, context: Int, startsWithBOS: Bool) throws(ScoringError) -> ScoringWindows {
        guard context >= 4 else { throw ScoringError(reason: "a context of \(context) tokens is too short to score (at least 4)") }
        guard tokenCount >= 2 * context else {
            throw ScoringError(reason: "the text has \(tokenCount) tokens; a context of \(context) needs at least \(2 * context) (two windows)",
                               fittingContext: tokenCount / 2 >= 4 ? tokenCount / 2 : nil)
        }
        let windows = (0..<(tokenCount / context)).map { Window(start: $0 * context, count: context, firstScored: context / 2) }
        return ScoringWindows(windows: windows, startsWithBOS: startsWithBOS)
    }

    /// One window over all `tokenCount` tokens, scoring every token after the first.
    public static func whole(tokenCount: Int) throws(ScoringError) -> ScoringWindows {
        guard tokenCount >= 2 else { throw ScoringError(reason: "the text needs at least two tokens to score one") }
        return ScoringWindows(windows: [Window(start: 0, count: tokenCount, firstScored: 0)], startsWithBOS: false)
    }
}
