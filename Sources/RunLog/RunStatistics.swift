import Foundation

/// What the log holds: how many runs of each kind and with each model, tokens generated, and
/// the time span.
public struct RunStatistics: Sendable, Equatable {
    /// All runs.
    public var runs: Int
    /// Runs by kind.
    public var byKind: [String: Int]
    /// Runs by model name.
    public var byModel: [String: Int]
    /// Tokens generated over all runs.
    public var generatedTokens: Int
    /// Interrupted runs.
    public var interrupted: Int
    /// The first and last run's times.
    public var first: Date?
    /// The last run's time.
    public var last: Date?
}
