/// A function a chat request offers the model as a tool (OpenAI's `tools[].function`).
public struct ToolFunction: Sendable, Equatable {
    /// Its name.
    public var name: String
    /// What it does, for the model.
    public var description: String
    /// The JSON Schema of its arguments, as JSON text (an object).
    public var parameters: String

    /// A function.
    public init(name: String, description: String, parameters: String) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }
}

/// Whether and which tools the model must call (OpenAI's `tool_choice`).
public enum ToolChoice: Sendable, Equatable {
    /// The model decides.
    case auto
    /// The model answers without calling tools.
    case none
    /// The model calls one or more tools.
    case required
    /// The model calls this function.
    case function(String)
}
