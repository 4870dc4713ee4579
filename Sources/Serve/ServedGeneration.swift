import GenerationTypes
import Inference
import RunRecords

/// A generation the server ran, finished or cut short by the client, for the caller to record
/// (`lumen serve` writes it to the run log).
public struct ServedGeneration: Sendable {
    /// The model that ran it.
    public let model: ServedModel
    /// The prompt (a completion's), or the last message (a chat's).
    public let prompt: String
    /// A chat's messages; nil for a completion.
    public let messages: [ChatMessage]?
    /// The tokens generated (their logits dropped).
    public let tokens: [GeneratedToken]
    /// Figures; finish reason `cancelled` when the client went away.
    public let summary: GenerationSummary
    /// The options it ran with (the seed is the one used).
    public let options: GenerationOptions
    /// The control vectors it was steered with (every request's and its own), if any.
    public let steering: RunSteering?
    /// The SAE features it set, if any.
    public let interventions: [RunIntervention]
    /// Whether the client disconnected before the end.
    public let disconnected: Bool
}
