import GGUF
import GenerationTypes
import Grammars
import Tokenizers
/// The parts of a generation that an experiment can replace or add to, each a value: logit
/// processors, a grammar the output must follow, the sampler, stop conditions, hooks into every
/// forward pass (the prompt's included) and LoRA adapters of its own. `GenerationOptions`
/// describe the usual ones (`init(options:model:hooks:)`); the options' length, stop strings,
/// teacher forcing and recorded logits apply whichever pipeline runs.
public struct GenerationPipeline: Sendable {
    /// Run in order on a copy of each step's logits, before the grammar and the sampler.
    public var processors: [any LogitProcessor]
    /// The grammar the output follows: tokens it refuses are never drawn, the end of generation
    /// comes only where it may end, and the generation ends when it is complete. Each generation
    /// follows it with a matcher of its own over the model's token trie.
    public var grammar: Grammar?
    /// Picks each token.
    public var sampler: any TokenSampler
    /// Checked in order after each token is drawn; the first that answers ends the generation.
    public var stopConditions: [any StopCondition]
    /// Read or change activations in every forward pass of the generation.
    public var hooks: [any ForwardHook]
    /// Drafts for speculative decoding when the options ask for it (`GenerationOptions.speculation`):
    /// a smaller model of the same vocabulary (`checkDraft`); without one, prompt lookup.
    public var draftModel: LanguageModel?
    /// The LoRA adapters the generation's forward passes apply instead of the session's (nil:
    /// the session's), made for the session's model: in a batch, to its own sequence's rows alone.
    public var adapters: AdapterSet?

    /// A pipeline of these parts; by default greedy, with nothing else.
    public init(processors: [any LogitProcessor] = [], grammar: Grammar? = nil, sampler: any TokenSampler = GreedySampler(),
                stopConditions: [any StopCondition] = [], hooks: [any ForwardHook] = []) {
        self.processors = processors
        self.grammar = grammar
        self.sampler = sampler
        self.stopConditions = stopConditions
        self.hooks = hooks
    }

    /// The parts `options` describe for `model`: its logit bias, then its penalties (unless they
    /// change nothing: `TokenPenalties`), as llama.cpp's sampler chain orders them, the grammar of
    /// its output constraint, its temperature sampler, and a stop at the end-of-generation tokens
    /// (if `stopAtEndOfSequence`); with `hooks`.
    ///
    /// - Throws: `GrammarError` when the output constraint cannot be made a grammar.
    public init(options: GenerationOptions, model: LanguageModel, hooks: [any ForwardHook] = []) throws(GrammarError) {
        let sampling = options.sampling
        let tokenizer = model.tokenizer
        var grammar: Grammar?
        if let constraint = options.constraint {
            guard options.forcedTokens.isEmpty else {
                throw GrammarError(constraint.optionName, at: .whole, "cannot be combined with forced tokens (teacher forcing)")
            }
            let vocabulary = tokenizer.vocabulary
            grammar = try Grammar(constraint) { text in vocabulary.id(of: Array(text.utf8)) }
        }
        let bias: [any LogitProcessor] = sampling.logitBias.isEmpty ? [] : [LogitBias(sampling.logitBias)]
        self.init(processors: bias + (TokenPenalties(sampling).map { [$0] } ?? []),
                  grammar: grammar, sampler: TemperatureSampler(options: sampling),
                  stopConditions: options.stopAtEndOfSequence ? [EndOfGenerationStop(tokenizer: tokenizer)] : [], hooks: hooks)
    }
}

extension GenerationPipeline {
    /// Checks that `draft` can draft for `target`: the same vocabulary, token for token (as
    /// llama.cpp's `llama-speculative` requires).
    ///
    /// - Throws: `ModelError` naming the draft model and the first difference.
    public static func checkDraft(_ draft: LanguageModel, for target: LanguageModel) throws(ModelError) {
        let (ours, theirs) = (target.tokenizer.vocabulary, draft.tokenizer.vocabulary)
        func refuse(_ reason: String) -> ModelError { ModelError(file: draft.gguf.path, field: "draft model", reason: reason) }
        guard ours.count == theirs.count else {
            throw refuse("has \(theirs.count) tokens, the model it drafts for \(ours.count): they need one vocabulary")
        }
        if let id = (0..<Int32(ours.count)).first(where: { ours.text(of: $0) != theirs.text(of: $0) }) {
            throw refuse("spells token \(id) \(String(decoding: theirs.text(of: id), as: UTF8.self).debugDescription), the model it drafts for \(String(decoding: ours.text(of: id), as: UTF8.self).debugDescription): they need one vocabulary")
        }
    }
}
