import Foundation
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import RunLog

extension RunOptions {
    /// The options as a Lumen dictionary (`g.options`, `run.options`), in the order of the
    /// generation labels; the penalties' window, the frequency and presence penalties and the
    /// logit bias only when they were given.
    var value: Value {
        var bias: Value?
        if let logitBias {
            var dictionary = LumenDictionary()
            for entry in logitBias { dictionary[.integer(Int(entry.token))] = entry.bias.map(Value.double) ?? .bool(false) }
            bias = .dictionary(dictionary)
        }
        let given: [(String, Value?)] = [
            ("maxTokens", .integer(maxTokens)), ("temperature", .double(temperature)), ("topK", .integer(topK)),
            ("topP", .double(topP)), ("minP", .double(minP)), ("repeatPenalty", .double(repeatPenalty)),
            ("repeatLastN", repeatLastN.map { .integer($0 == Int.max ? -1 : $0) }), ("frequencyPenalty", frequencyPenalty.map(Value.double)),
            ("presencePenalty", presencePenalty.map(Value.double)), ("logitBias", bias),
            ("seed", .integer(Int(truncatingIfNeeded: seed))), ("stop", .array(stop.map(Value.string))),
        ]
        return .dictionary(LumenDictionary(given.compactMap { label, value in value.map { (label, $0) } }))
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

extension Builtin.Context {
    /// Records `generation`, made by `entry` with `model`, in the run log: `prompt` as the cell
    /// gave it, and `rendered` when the model was given another text (a chat template's).
    /// `steering` is the control vectors it was steered with, `interventions` the ablations and
    /// patches made inside it, `adapters` the LoRA adapters it brought instead of the model's.
    func record(_ generation: Generation, entry: String, model: any GenerativeModel, messages: [ChatMessage]? = nil, prompt: String? = nil,
                rendered: String? = nil, steering: RunSteering? = nil, interventions: [RunIntervention] = [],
                adapters: AdapterSet? = nil) throws(LumenError) {
        guard try models.recorder.runLog != nil, var runModel = model.runModel else { return }
        if let adapters { runModel.adapters = RunModel.logged(adapters) }
        try record(RunRecord(generationAt: entry, origin: try origin, model: runModel,
                             prompt: prompt ?? generation.prompt, messages: messages, renderedPrompt: rendered, tokens: generation.tokens,
                             summary: generation.stats, options: generation.options, interrupted: generation.interrupted,
                             steering: steering, interventions: interventions))
    }
}

/// What the run log needs to know about a generation besides its result: the entry point, the
/// model, for a conversation turn its messages, for a steered generation its vectors, the
/// ablations and patches made inside it, and the adapters it brought instead of the model's.
struct RunDraft {
    let entry: String
    let model: any GenerativeModel
    var messages: [ChatMessage]? = nil
    var steering: RunSteering? = nil
    var interventions: [RunIntervention] = []
    var adapters: AdapterSet? = nil
}
