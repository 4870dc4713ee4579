import Evaluation

/// A line magic (`%runs 5`): its name, what it does, and its body, given the words after the
/// name. The body either does its work and returns nil, or returns Lumen code the cell runs
/// instead (`%defaults temperature=0.2` becomes `defaults(temperature: 0.2)`).
public struct Magic: Sendable {
    /// The body: the words after the name, and where output goes.
    public typealias Body = @Sendable (_ words: [String], _ output: any OutputSink) async throws -> String?

    /// The name with its `%`.
    public let name: String
    /// One line saying what it does, as `%lsmagic` lists it.
    public let summary: String
    let body: Body

    /// Creates a magic.
    public init(name: String, summary: String, body: @escaping Body) {
        self.name = name
        self.summary = summary
        self.body = body
    }
}
