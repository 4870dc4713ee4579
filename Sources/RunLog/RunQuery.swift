import Foundation

/// Which runs to list: by model (name or path containing the text), since a time, containing a
/// text in the prompt or output, newest first, at most `limit`.
public struct RunQuery: Sendable, Equatable {
    /// Text the model's name or path contains.
    public var model: String?
    /// The earliest time.
    public var since: Date?
    /// Text the prompt or output contains.
    public var contains: String?
    /// The kind of run.
    public var kind: RunKind?
    /// At most this many runs (nil: all).
    public var limit: Int?

    /// A query; all runs, newest first, when nothing is given.
    public init(model: String? = nil, since: Date? = nil, contains: String? = nil, kind: RunKind? = nil, limit: Int? = nil) {
        self.model = model
        self.since = since
        self.contains = contains
        self.kind = kind
        self.limit = limit
    }
}
