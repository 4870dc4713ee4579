import Foundation
import GenerationTypes
import Inference
import RunRecords

// The run log's forms of the engine's values, which every front end records through
// `ModelContainer` (or, for runs that are not generations, directly).

extension RunModel {
    /// The run log's description of `model`, known as `name` (by default its file's name
    /// without `.gguf`, as `load` names it), under `adapters`.
    public init(_ model: LanguageModel, name: String? = nil, adapters: AdapterSet = .none) {
        self.init(name: name ?? URL(fileURLWithPath: model.gguf.path).deletingPathExtension().lastPathComponent, path: model.gguf.path,
                  architecture: model.configuration.architecture, tensorTypes: model.tensorTypeCounts, adapters: Self.logged(adapters))
    }

    /// `adapters` as the log keeps them, nil for none: each file by its absolute path, each scale
    /// through its shortest decimal form (0.7, not 0.699999988).
    public static func logged(_ adapters: AdapterSet) -> [RunAdapter]? {
        adapters.isEmpty ? nil : adapters.entries.map {
            RunAdapter(path: URL(fileURLWithPath: $0.adapter.path).standardizedFileURL.path, scale: Double("\($0.scale)") ?? Double($0.scale))
        }
    }
}

extension RunOptions {
    /// The logged form of generation options (the seed is the one actually used).
    public init(_ options: GenerationOptions) {
        let sampling = options.sampling
        // Through the shortest decimal form, so 0.05 is logged as 0.05, not 0.0500000007.
        func decimal(_ value: Float) -> Double { Double("\(value)") ?? Double(value) }
        self.init(maxTokens: options.maxTokens, temperature: decimal(sampling.temperature), topK: sampling.topK, topP: decimal(sampling.topP),
                  minP: decimal(sampling.minP), repeatPenalty: decimal(sampling.repeatPenalty), seed: sampling.seed, stop: options.stopStrings,
                  constraint: options.constraint.map(RunConstraint.init))
        let defaults = SamplingOptions()
        if sampling.repeatWindow != defaults.repeatWindow { repeatLastN = sampling.repeatWindow }
        if sampling.frequencyPenalty != 0 { frequencyPenalty = decimal(sampling.frequencyPenalty) }
        if sampling.presencePenalty != 0 { presencePenalty = decimal(sampling.presencePenalty) }
        if !sampling.logitBias.isEmpty {
            logitBias = sampling.logitBias.sorted { $0.key < $1.key }.map { RunLogitBias(token: $0.key, bias: $0.value == -.infinity ? nil : decimal($0.value)) }
        }
    }

    /// Generation options that repeat a logged run.
    public var generationOptions: GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = maxTokens
        options.sampling.temperature = Float(temperature)
        options.sampling.topK = topK
        options.sampling.topP = Float(topP)
        options.sampling.minP = Float(minP)
        options.sampling.repeatPenalty = Float(repeatPenalty)
        if let repeatLastN { options.sampling.repeatWindow = repeatLastN }
        options.sampling.frequencyPenalty = Float(frequencyPenalty ?? 0)
        options.sampling.presencePenalty = Float(presencePenalty ?? 0)
        options.sampling.logitBias = Dictionary((logitBias ?? []).map { ($0.token, $0.bias.map(Float.init) ?? -.infinity) }) { $0 + $1 }
        options.sampling.seed = seed
        options.stopStrings = stop
        options.constraint = constraint?.outputConstraint
        return options
    }
}

extension RunConstraint {
    /// The logged form of an output constraint.
    public init(_ constraint: OutputConstraint) {
        switch constraint {
        case .grammar(let text): self.init(option: "grammar", text: text)
        case .jsonObject: self.init(option: "json")
        case .jsonSchema(let schema): self.init(option: "json", text: schema)
        case .regex(let pattern): self.init(option: "regex", text: pattern)
        case .choice(let choices): self.init(option: "choice", choices: choices)
        }
    }

    /// The constraint a logged run asked for (nil for an option this version does not know).
    public var outputConstraint: OutputConstraint? {
        switch (option, text) {
        case ("grammar", let text?): .grammar(text)
        case ("json", nil): .jsonObject
        case ("json", let schema?): .jsonSchema(schema)
        case ("regex", let pattern?): .regex(pattern)
        case ("choice", _): .choice(choices ?? [])
        default: nil
        }
    }
}

extension RunRecord {
    /// The record of a finished (or interrupted) generation, wherever it ran (a cell, a command,
    /// `lumen serve`). `renderedPrompt` is the text the model was given when it differs from
    /// `prompt` (a chat template's rendering); `steering` the control vectors it was steered
    /// with, `interventions` the ablations and patches made inside it. Speculative decoding's
    /// drafted and accepted tokens are its figures.
    public init(generationAt entry: String, origin: RunOrigin, model: RunModel, prompt: String, messages: [ChatMessage]? = nil,
                renderedPrompt: String? = nil, tokens: [GeneratedToken], summary: GenerationSummary, options: GenerationOptions, interrupted: Bool,
                steering: RunSteering? = nil, interventions: [RunIntervention] = []) {
        var logged = RunOptions(options)
        logged.steering = steering
        logged.interventions = interventions.isEmpty ? nil : interventions
        self.init(entry: entry, origin: origin, model: model, options: logged, prompt: prompt,
                  messages: messages?.map { RunMessage(role: $0.role, content: $0.content) }, renderedPrompt: renderedPrompt,
                  output: tokens.map(\.text).joined(), tokenIDs: tokens.map(\.id), logProbabilities: tokens.map(\.logProbability),
                  finishReason: interrupted ? "interrupted" : summary.finishReason.rawValue, promptTokens: summary.promptTokens,
                  generatedTokens: tokens.count, promptTokensPerSecond: summary.promptTokensPerSecond,
                  tokensPerSecond: summary.generationTokensPerSecond, timeToFirstToken: summary.timeToFirstToken, interrupted: interrupted,
                  figures: summary.draftedTokens > 0 ? ["draftedTokens": Double(summary.draftedTokens), "acceptedTokens": Double(summary.acceptedTokens)] : nil)
    }
}
