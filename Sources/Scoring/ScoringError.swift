/// Why a text cannot be scored as asked.
public struct ScoringError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public let reason: String
    /// For a text too short for its context: the largest context that gives it two windows
    /// (nil when none does), which each front end suggests in its own words (`--ctx`, `context:`).
    public let fittingContext: Int?

    /// An error for `reason`.
    public init(reason: String, fittingContext: Int? = nil) {
        self.reason = reason
        self.fittingContext = fittingContext
    }

    /// The reason.
    public var description: String { reason }
}
