/// Remembers the most recent message signatures so that a replayed message can be refused.
/// Bounded: once full, the oldest signature is forgotten first.
public struct ReplayGuard: Sendable {
    private var seen: Set<String> = []
    private var order: [String] = []
    private var oldest = 0
    /// How many signatures are remembered.
    public let capacity: Int

    /// Creates a guard remembering up to `capacity` signatures.
    public init(capacity: Int = 16_384) {
        self.capacity = max(1, capacity)
    }

    /// Records `signature`; returns false when it was already seen (a replay).
    public mutating func admit(_ signature: String) -> Bool {
        guard !seen.contains(signature) else { return false }
        seen.insert(signature)
        if order.count < capacity {
            order.append(signature)
        } else {
            seen.remove(order[oldest])
            order[oldest] = signature
            oldest = (oldest + 1) % capacity
        }
        return true
    }
}
