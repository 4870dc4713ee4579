/// Where run records are kept: the run log (`RunLog`, SQLite), or whatever a program embedding
/// the engine keeps them in.
public protocol RunRecording: Sendable {
    /// Keeps `record`, without holding up the caller (a generation that has just finished).
    func record(_ record: RunRecord)
}
