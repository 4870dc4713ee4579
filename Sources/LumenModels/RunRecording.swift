import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenLanguage
import RunLog

extension RunModel {
    /// The run log's description of `model`, known as `name` (by default its file's name
    /// without `.gguf`, as `load` names it).
    public init(_ model: LanguageModel, name: String? = nil) {
        self.init(name: name ?? URL(fileURLWithPath: model.gguf.path).deletingPathExtension().lastPathComponent, path: model.gguf.path,
                  architecture: model.configuration.architecture, tensorTypes: model.tensorTypeCounts)
    }
}

extension RunOptions {
    /// The options as a Lumen dictionary (`g.options`, `run.options`), in the order of the
    /// generation labels.
    var value: Value {
        .dictionary(LumenDictionary([
            ("maxTokens", .integer(maxTokens)), ("temperature", .double(temperature)), ("topK", .integer(topK)),
            ("topP", .double(topP)), ("minP", .double(minP)), ("repeatPenalty", .double(repeatPenalty)),
            ("seed", .integer(Int(truncatingIfNeeded: seed))), ("stop", .array(stop.map(Value.string))),
        ]))
    }

    /// The logged form of generation options (the seed is the one actually used).
    public init(_ options: GenerationOptions) {
        let sampling = options.sampling
        // Through the shortest decimal form, so 0.05 is logged as 0.05, not 0.0500000007.
        func decimal(_ value: Float) -> Double { Double("\(value)") ?? Double(value) }
        self.init(maxTokens: options.maxTokens, temperature: decimal(sampling.temperature), topK: sampling.topK, topP: decimal(sampling.topP),
                  minP: decimal(sampling.minP), repeatPenalty: decimal(sampling.repeatPenalty), seed: sampling.seed, stop: options.stopStrings,
                  constraint: options.constraint.map(RunConstraint.init))
    }

    /// Generation options that repeat a logged run.
    var generationOptions: GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = maxTokens
        options.sampling.temperature = Float(temperature)
        options.sampling.topK = topK
        options.sampling.topP = Float(topP)
        options.sampling.minP = Float(minP)
        options.sampling.repeatPenalty = Float(repeatPenalty)
        options.sampling.seed = seed
        options.stopStrings = stop
        options.constraint = constraint?.outputConstraint
        return options
    }
}

extension RunConstraint {
    /// The logged form of an output constraint.
    init(_ constraint: OutputConstraint) {
        switch constraint {
        case .grammar(let text): self.init(option: "grammar", text: text)
        case .jsonObject: self.init(option: "json")
        case .jsonSchema(let schema): self.init(option: "json", text: schema)
        case .regex(let pattern): self.init(option: "regex", text: pattern)
        case .choice(let choices): self.init(option: "choice", choices: choices)
        }
    }

    /// The constraint a logged run asked for (nil for an option this version does not know).
    var outputConstraint: OutputConstraint? {
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

extension RunSteering {
    /// The hook that steers `session`'s model as the logged run was steered: each vector read
    /// from its file (checked against the model) or built again from its prompts, scaled and
    /// summed.
    func hooks(on session: ModelSession) async throws(ModelError) -> [any ForwardHook] {
        // The logged `[first, last]`, when it is one.
        let range = blocks.flatMap { $0.count == 2 && $0[0] <= $0[1] ? $0[0]...$0[1] : nil }
        var sum: ControlVector?
        for vector in vectors {
            var made: ControlVector?
            if let path = vector.path {
                made = try ControlVector.sum(of: [(path: path, scale: 1)], for: session.model)
            } else if let values = vector.values, let range {
                made = ControlVector(direction: values, blocks: range)
            } else {
                guard let method = ContrastiveMethod(rawValue: vector.method ?? ContrastiveMethod.last.rawValue) else {
                    throw ModelError(file: session.model.gguf.path, field: "method", reason: "the log names method \(vector.method ?? ""), not one of \(ContrastiveMethod.names)")
                }
                made = try await ControlVector.contrastive(session: session, positive: vector.positive ?? [], negative: vector.negative ?? [], method: method)
            }
            if vector.normalized == true { made = made?.normalized() }
            if let scaled = made?.scaled(by: Float(vector.scale)) { sum = sum.map { $0 + scaled } ?? scaled }
        }
        return sum.map { [$0.steering(blocks: range)] } ?? []
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

extension Builtin.Context {
    /// Records `generation`, made by `entry` with `model`, in the run log: `prompt` as the cell
    /// gave it, and `rendered` when the model was given another text (a chat template's).
    /// `steering` is the control vectors it was steered with, `interventions` the ablations and
    /// patches made inside it.
    func record(_ generation: Generation, entry: String, model: any GenerativeModel, messages: [ChatMessage]? = nil, prompt: String? = nil,
                rendered: String? = nil, steering: RunSteering? = nil, interventions: [RunIntervention] = []) throws(LumenError) {
        guard try models.recorder.runLog != nil, let runModel = model.runModel else { return }
        try record(RunRecord(generationAt: entry, origin: try origin, model: runModel,
                             prompt: prompt ?? generation.prompt, messages: messages, renderedPrompt: rendered, tokens: generation.tokens,
                             summary: generation.stats, options: generation.options, interrupted: generation.interrupted,
                             steering: steering, interventions: interventions))
    }
}

/// What the run log needs to know about a generation besides its result: the entry point, the
/// model, for a conversation turn its messages, for a steered generation its vectors, and the
/// ablations and patches made inside it.
struct RunDraft {
    let entry: String
    let model: any GenerativeModel
    var messages: [ChatMessage]? = nil
    var steering: RunSteering? = nil
    var interventions: [RunIntervention] = []
}
