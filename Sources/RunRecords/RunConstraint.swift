/// What a logged generation's output was held to, so `replay` holds it again: the option that
/// asked (`grammar`, `json`, `regex`, `choice`) with its text (a GBNF grammar, a JSON Schema's
/// JSON, a pattern; none for any JSON object) or its choices.
public struct RunConstraint: Codable, Sendable, Equatable {
    /// The option: "grammar", "json", "regex" or "choice".
    public var option: String
    /// The grammar, schema or pattern.
    public var text: String?
    /// The strings of a choice.
    public var choices: [String]?

    /// A constraint as logged.
    public init(option: String, text: String? = nil, choices: [String]? = nil) {
        self.option = option
        self.text = text
        self.choices = choices
    }
}
