import Executors
import GGUF
import GenerationTypes
import Inference
import LumenKit
import LumenLanguage
import RunLog

extension ModelLibrary {
    /// The most bytes a trace keeps unless `limit:` says otherwise.
    static let traceLimit = 2 << 30

    static let trace = Builtin(
        name: "trace",
        signature: "trace(_ model, _ prompt: String, keep: [\"resid_post\"], blocks: all, positions: all, generate: 0, interventions: [], steer: nil, steerScale: 1.0, steerBlocks: nil, limit: 2 GiB) -> Trace",
        summary: "Runs the prompt (and with generate: n, up to n greedy tokens after it, a generation the run log keeps) and keeps activations as tensors: keep: names the points by TransformerLens' names (embed, resid_pre, q, k, v, z, pattern, attn_out, resid_mid, mlp_pre, mlp_post, mlp_out, resid_post, ln_final, logits; docs/language.md gives each one's shape), blocks: and positions: (ranges or arrays; negative positions from the end) choose where. Says what it will keep and refuses more than limit: bytes. interventions: ablate(…) and patch(…) values change the run, and steer: a control vector as generate's does."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        let container = try modelCall(at: context.location) { () throws(ModelError) in try model.container() }
        let loaded = container.model
        let c = loaded.configuration
        var points = [ActivationPoint.blockOutput]
        if let (value, location) = arguments.labelled("keep") {
            // One name, or an array of names (a String is not read as its characters).
            let names = if case .string = value { [value] } else { (try? Operators.elements(of: value, at: location)) ?? [value] }
            points = try names.map { name throws(LumenError) in
                guard case .string(let text) = name, let point = ActivationPoint(name: text) else {
                    throw LumenError(.value, "keep: \(name.description) is not a point; the points are \(ActivationPoint.allCases.map(\.rawValue).joined(separator: ", "))", at: location)
                }
                return point
            }
            guard !points.isEmpty else { throw LumenError(.value, "keep: names no point", at: location) }
        }
        var blocks = Array(0..<c.blockCount)
        if let (value, location) = arguments.labelled("blocks") {
            let elements = (try? Operators.elements(of: value, at: location)) ?? [value]
            blocks = try elements.map { element throws(LumenError) in
                guard case .integer(let block) = element, (0..<c.blockCount).contains(block) else {
                    throw LumenError(.value, "blocks: \(element.printed) is not one of the model's \(c.blockCount) blocks (0…\(c.blockCount - 1))", at: location)
                }
                return block
            }
            blocks = Array(Set(blocks)).sorted()
        }
        let chosenPositions = try arguments.labelled("positions").map { value, location throws(LumenError) -> ([Int], SourceLocation) in
            let elements = (try? Operators.elements(of: value, at: location)) ?? [value]
            return (try elements.map { element throws(LumenError) in
                guard case .integer(let position) = element else { throw LumenError(.type, "positions: holds Ints, not \(element.typeName)", at: location) }
                return position
            }, location)
        }
        let generated = try arguments.labelledInteger("generate") ?? 0
        let limitBytes = try arguments.labelledNumber("limit") ?? Double(traceLimit)
        let (interventionHooks, logged) = try interventions(&arguments, model: model, at: context.location)
        let steering = try steering(&arguments)
        try arguments.finish()
        guard generated >= 0 else { throw LumenError(.value, "generate: must not be negative, got \(generated)", at: context.location) }
        guard limitBytes > 0, limitBytes <= 0x1p50 else {
            throw LumenError(.value, "limit: must be a number of bytes above 0 and at most 2^50, got \(limitBytes)", at: context.location)
        }
        let limit = Int(limitBytes)

        let tokens = container.tokenize(prompt)
        var positions: [Int]?
        if let (chosen, location) = chosenPositions {
            guard generated == 0 else { throw LumenError(.value, "positions: chooses positions of the prompt; a trace of a generation keeps them all", at: location) }
            positions = Array(Set(try chosen.map { position throws(LumenError) in
                let resolved = position < 0 ? tokens.count + position : position
                guard (0..<tokens.count).contains(resolved) else {
                    throw LumenError(.value, "positions: \(position) is not one of the prompt's \(tokens.count) positions (0…\(tokens.count - 1), or -\(tokens.count)…-1)", at: location)
                }
                return resolved
            })).sorted()
        }
        let plan = ActivationTrace(points: points, blocks: blocks, positions: positions, configuration: c)
        let contextLength = container.sessions.contextLength
        let most = min(tokens.count + min(generated, contextLength), contextLength)
        let bytes = plan.bytes(tokens: most)
        guard bytes <= limit else {
            throw LumenError(.value, "this trace would keep \(ActivationTrace.size(bytes)) for \(most) tokens (\(plan.cost(tokens: most))), over the limit of \(ActivationTrace.size(limit)): keep fewer points or blocks, or raise limit:", at: context.location)
        }
        let capture = plan.capture(tokens: most)
        let hooks: [any ForwardHook] = steering.hooks + interventionHooks + [capture]
        var ids = tokens, logits: [Float]?, text: String?, generation: GenerationCollector?, recordedOptions = GenerationOptions()
        do {
            if generated == 0 {
                logits = try await container.withSession { session in try await session.evaluate(tokens, hooks: hooks) }
            } else {
                let options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: generated)
                let collected = try await GenerationCollector.collect(container.generate(tokens: tokens, options: options, hooks: hooks))
                // An interrupt ends the stream early without an error: the cell is interrupted, not given a partial trace.
                if Task.isCancelled { throw CancellationError() }
                // The last token drawn never ran through the model: its activations do not exist.
                ids += collected.tokens.map(\.id)
                text = collected.text
                generation = collected
                recordedOptions = options
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: context.location)
        }
        // A traced generation is a generation: the run log keeps it with its interventions, and
        // replay generates it again with them.
        if let generation, let summary = generation.summary, let runModel = model.runModel {
            try context.record(RunRecord(generationAt: "trace", origin: try context.origin, model: runModel, prompt: prompt, tokens: generation.tokens,
                                         summary: summary, options: recordedOptions, interrupted: false, steering: steering.logged, interventions: logged))
        }
        let pieces = ids.map { loaded.tokenizer.textPiece($0) }
        let tensors = plan.tensors(from: capture, labels: pieces)
        // A vocabulary's labels, made once per model (hundreds of thousands of pieces): off the cooperative pool.
        let tokenizer = loaded.tokenizer
        let labels = await DedicatedThread.run(name: "lumen-token-labels") { model.tokenLabels(tokenizer) }
        return .host(TraceObject(trace: plan, ids: ids, pieces: pieces, tensors: tensors, logits: logits, tokenLabels: labels,
                                 generated: text, interventions: logged))
    }
}
