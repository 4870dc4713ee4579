import Evaluation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import RunLog
import Scoring

/// A model cells use: a GGUF file loaded in this process (`LoadedModel`) or a model served over
/// the OpenAI-compatible API (`RemoteModelObject`). Every built-in takes its model through this,
/// so the same cells run against either; what a served model cannot do, it refuses here
/// (`loaded(for:)`), with the reason.
protocol GenerativeModel: HostObject {
    /// The name tables and the run log show.
    var name: String { get }
    /// Where it runs, to tell apart two models of one name: `local`, or the server's host and port.
    var place: String { get }
    /// The run log's description of the model (nil: not known any more, e.g. unloaded).
    var runModel: RunModel? { get }
    /// Starts generating after `prompt` on the least busy session (or endpoint) of the pool,
    /// with `hooks` in its forward passes (a served model refuses any: it does not expose its
    /// activations); raising `stop` ends the stream early with finish reason `cancelled`.
    func generate(_ prompt: String, options: GenerationOptions, hooks: [any ForwardHook], stop: StopSignal) async throws
        -> AsyncThrowingStream<TokenEvent, any Error>
    /// The `k` most likely next tokens after `prompt`, most likely first: id (nil when a server
    /// does not say), piece and log-probability.
    func nextTokens(_ prompt: String, k: Int) async throws -> [(id: Int32?, piece: String, logProbability: Double)]
    /// A new conversation, starting with `system`, rendered by `template` where the model renders
    /// its own prompts. `note` receives remarks for the user (a template fallback).
    func conversation(system: String?, template: String?, note: (String) -> Void) async throws -> ChatSession
    /// The log-probability of every token of `request`'s text after the first (of each window's
    /// scored half, with a context); `progress` hears the windows done, of how many, and the
    /// estimate so far.
    func perplexity(_ request: ScoringRequest, progress: (Int, Int, Estimate) -> Void) async throws -> PerplexityScores
    /// This model in this process, for `use` (a built-in or property, named in the refusal),
    /// which needs its weights: the forward pass's insides, its tokenizer, its sessions. A
    /// served model refuses: it shares neither.
    func loaded(for use: String) throws(ModelError) -> LoadedModel
}
