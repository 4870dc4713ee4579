/// Generation timings (`GenerationSummary`'s rates, a run's time limit) are measured as `Duration`s
/// and reported in seconds.
extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
