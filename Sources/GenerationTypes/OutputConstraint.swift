/// What a generation's output must be, as a grammar enforces it token by token: text of a llama.cpp
/// GBNF grammar, JSON (any object, or valid against a JSON Schema), a whole match of a regular
/// expression, or one of some strings. The description travels to the engine, or to a server as
/// OpenAI's `response_format` and llama-server's `grammar`.
public enum OutputConstraint: Sendable, Equatable {
    /// Text of this llama.cpp GBNF grammar (from its `root` rule).
    case grammar(String)
    /// Any JSON object (OpenAI's `{"type": "json_object"}`).
    case jsonObject
    /// JSON valid against this JSON Schema, given as JSON text.
    case jsonSchema(String)
    /// Text this regular expression matches as a whole.
    case regex(String)
    /// Exactly one of these strings.
    case choice([String])

    /// The option that asks for it, in errors and logs: `grammar`, `json`, `regex`, `choice`.
    public var optionName: String {
        switch self {
        case .grammar: "grammar"
        case .jsonObject, .jsonSchema: "json"
        case .regex: "regex"
        case .choice: "choice"
        }
    }
}
