/// What a logged run did; stored as its raw value.
public enum RunKind: String, Codable, Sendable, CaseIterable {
    /// Text generated after a prompt (any entry point, a conversation turn included).
    case generation
    /// A perplexity measured over a text.
    case perplexity
    /// Two models' next-token distributions compared over a text.
    case comparison

    /// The kind `name` names, or an error that lists the kinds.
    public init(named name: String) throws(RunKindError) {
        guard let kind = RunKind(rawValue: name) else { throw RunKindError(name: name) }
        self = kind
    }
}

/// A kind of run that does not exist.
public struct RunKindError: Error, CustomStringConvertible {
    /// The name given.
    public let name: String

    public var description: String {
        "no kind of run is called \(name.debugDescription); the kinds are \(RunKind.allCases.map(\.rawValue).joined(separator: ", "))"
    }
}
