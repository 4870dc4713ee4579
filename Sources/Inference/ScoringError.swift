/// Why a text cannot be scored as asked.
public struct ScoringError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public let reason: String

    /// The reason.
    public var description: String { reason }
}
