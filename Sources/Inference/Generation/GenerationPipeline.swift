import GenerationTypes
import Tokenizers
/// The parts of a generation that an experiment can replace or add to, each a value: logit
/// processors, the sampler, stop conditions, and hooks into every forward pass (the prompt's
/// included). `GenerationOptions` describe the usual ones (`init(options:tokenizer:)`); the
/// options' length, stop strings, teacher forcing and recorded logits apply whichever pipeline
/// runs.
public struct GenerationPipeline: Sendable {
    /// Run in order on a copy of each step's logits, before the sampler.
    public var processors: [any LogitProcessor]
    /// Picks each token.
    public var sampler: any TokenSampler
    /// Checked in order after each token is drawn; the first that answers ends the generation.
    public var stopConditions: [any StopCondition]
    /// Read or change activations in every forward pass of the generation.
    public var hooks: [any ForwardHook]

    /// A pipeline of these parts; by default greedy, with nothing else.
    public init(processors: [any LogitProcessor] = [], sampler: any TokenSampler = GreedySampler(),
                stopConditions: [any StopCondition] = [], hooks: [any ForwardHook] = []) {
        self.processors = processors
        self.sampler = sampler
        self.stopConditions = stopConditions
        self.hooks = hooks
    }

    /// The parts `options` describe for a model with `tokenizer`: its repetition penalty (unless
    /// 1), its temperature sampler, and a stop at the end-of-generation tokens (if
    /// `stopAtEndOfSequence`); with `hooks`.
    public init(options: GenerationOptions, tokenizer: Tokenizer, hooks: [any ForwardHook] = []) {
        let sampling = options.sampling
        self.init(processors: sampling.repeatPenalty == 1 ? [] : [RepetitionPenalty(penalty: sampling.repeatPenalty, window: sampling.repeatWindow)],
                  sampler: TemperatureSampler(options: sampling),
                  stopConditions: options.stopAtEndOfSequence ? [EndOfGenerationStop(tokenizer: tokenizer)] : [], hooks: hooks)
    }
}
