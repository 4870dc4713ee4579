/// When and how long to wait before sending a request again: only for statuses that say "busy"
/// (429, 502, 503) and failures to connect, before any of the response was read, a bounded number
/// of times, waiting exponentially longer (or as long as `Retry-After` asks, within the cap).
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var attempts: Int
    /// Wait before the second attempt, in seconds; doubled for each one after.
    public var initialDelay: Double
    /// The longest wait, in seconds.
    public var maximumDelay: Double

    /// A policy.
    public init(attempts: Int = 4, initialDelay: Double = 0.5, maximumDelay: Double = 8) {
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The statuses worth retrying: rate limited, bad gateway, unavailable.
    public static let retriedStatuses: Set<Int> = [429, 502, 503]

    /// Seconds to wait after failed attempt number `attempt` (1-based), honouring a
    /// `Retry-After` of `retryAfter` seconds when the server sent one.
    public func delay(after attempt: Int, retryAfter: Double?) -> Double {
        let exponential = initialDelay * Double(1 << min(attempt - 1, 16))
        return min(max(retryAfter ?? 0, exponential), maximumDelay)
    }
}
