import ArgumentParser
import GenerationTypes
import Inference

/// llama.cpp's options for speculative decoding, for `lumen generate`: prompt lookup
/// (`llama-lookup`) or a draft model (`llama-speculative`). The output is the one plain decoding
/// gives; the summary says how many drafted tokens were accepted.
struct SpeculationArguments: ParsableArguments {
    @Option(name: .customLong("lookup-ngram"), help: "Draft by prompt lookup: the tokens that followed the latest earlier occurrence of the last N tokens.")
    var lookupNgram: Int?

    @Option(name: [.customLong("md", withSingleDash: true), .customLong("model-draft"), .customLong("spec-draft-model")],
            help: "Draft with this smaller model of the same vocabulary (a path or a name).")
    var modelDraft: String?

    @Option(name: [.customLong("draft-max"), .customLong("spec-draft-n-max")], help: "The most tokens drafted at once (fewer while drafts fail).")
    var draftMax = 16

    @Option(name: [.customLong("draft-p-min"), .customLong("spec-draft-p-min")], help: "A draft model stops drafting at a token it finds less likely than P.")
    var draftProbabilityMin: Float = 0.75

    func validate() throws {
        if lookupNgram != nil, modelDraft != nil { throw ValidationError("give one of --lookup-ngram and --model-draft") }
        if let lookupNgram, lookupNgram < 1 { throw ValidationError("--lookup-ngram must be 1 or more, got \(lookupNgram)") }
        if draftMax < 1 { throw ValidationError("--draft-max must be 1 or more, got \(draftMax)") }
        if !(0...1).contains(draftProbabilityMin) { throw ValidationError("--draft-p-min must be between 0 and 1, got \(draftProbabilityMin)") }
    }

    /// The speculative decoding asked for; nil: none.
    var speculation: Speculation? {
        guard lookupNgram != nil || modelDraft != nil else { return nil }
        return Speculation(lookupNgram: lookupNgram, draftMax: draftMax, draftProbabilityMin: draftProbabilityMin)
    }

    /// The draft model, loaded and checked to share `target`'s vocabulary; nil when none is given.
    func draftModel(for target: LanguageModel) async throws -> LanguageModel? {
        guard let modelDraft else { return nil }
        let draft = try await WeightCache.shared.load(ModelLocator.resolve(modelDraft))
        try GenerationPipeline.checkDraft(draft, for: target)
        return draft
    }
}
