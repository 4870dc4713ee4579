import GenerationTypes
import RunRecords

/// Where a container's generations are recorded: a run log (the command-line tool's is `RunLog`,
/// SQLite; the library itself links no database), and the front end they are recorded as coming
/// from.
public struct RunRecorder: Sendable {
    /// The log written to; its writes never hold up a generation.
    public let log: any RunRecording
    /// The front end (and notebook and cell) the generations came from.
    public let origin: RunOrigin

    /// Records to `log` as coming from `origin`.
    public init(log: any RunRecording, origin: RunOrigin) {
        self.log = log
        self.origin = origin
    }
}

/// What the run log is told about a generation besides its tokens and figures.
public struct RunDescription: Sendable {
    /// The entry point that asked for it (`generate`, `lumen chat`, …).
    public var entry: String
    /// The prompt as the caller gave it (nil: the prompt's text, or for a chat the last message).
    public var prompt: String?
    /// A conversation's messages.
    public var messages: [ChatMessage]?
    /// The text the model was given when it differs from the prompt (a chat template's rendering).
    public var renderedPrompt: String?
    /// The control vectors the generation was steered with.
    public var steering: RunSteering?
    /// The ablations and patches made inside it.
    public var interventions: [RunIntervention]

    /// A description of a generation asked for by `entry`.
    public init(entry: String, prompt: String? = nil, messages: [ChatMessage]? = nil, renderedPrompt: String? = nil, steering: RunSteering? = nil,
                interventions: [RunIntervention] = []) {
        self.entry = entry
        self.prompt = prompt
        self.messages = messages
        self.renderedPrompt = renderedPrompt
        self.steering = steering
        self.interventions = interventions
    }
}
