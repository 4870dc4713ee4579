import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage
import RunLog
import SparseAutoencoders
import Tensors

extension ModelLibrary {
    static let loadSAE = Builtin(
        name: "loadSAE",
        signature: "loadSAE(_ path: String, hook: String? = nil, inputScale: Double? = nil) -> SAE",
        summary: "Reads a sparse autoencoder: a SAELens folder (cfg.json and sae_weights.safetensors; architectures standard, jumprelu and topk) or Gemma Scope's params.safetensors (JumpReLU, its hook from its folders' names, resid_post/layer_12_…). hook: a TransformerLens hook name (blocks.12.hook_resid_post) replaces the files'; inputScale: folds in SAELens' expected_average_only_in scale. F32, F16 and BF16 weights. s.encode(x), s.decode(f), s.direction(i); features(m, s, prompt) encodes a prompt's activations."
    ) { arguments, context in
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        let hook = try arguments.labelledString("hook")
        let scale = try arguments.labelledNumber("inputScale")
        try arguments.finish()
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        // Reading the weights is blocking work: it runs on a thread of its own.
        let sae: SparseAutoencoder
        do {
            sae = try await DedicatedThread.run(name: "lumen-load") { () throws(ModelError) in
                try SparseAutoencoder.load(path: absolute, hook: hook, inputScale: scale.map(Float.init))
            }
        } catch {
            throw LumenError(.model, "\(error)", at: context.location)
        }
        return .host(SAEObject(sae: sae, path: absolute, inputScale: scale))
    }

    static let features = Builtin(
        name: "features",
        signature: "features(_ model, _ sae: SAE, _ prompt: String) -> Tensor",
        summary: "The SAE's feature activations at each of the prompt's tokens: the model runs the prompt, the SAE encodes the activations at its hook. A Tensor [position][feature], its positions labelled with the tokens, shown as each token's strongest features firing."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let sae = try saeArgument(&arguments).sae
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        try arguments.finish()
        return TensorObject.value(try await featureActivations(model, sae, prompt, at: context.location))
    }

    static let topActivations = Builtin(
        name: "topActivations",
        signature: "topActivations(_ model, _ sae: SAE, feature: Int, texts: [String], count: 10) -> [[String: Any]]",
        summary: "Where a feature fires most over the texts, as feature dashboards show it: up to count: positions where it fires, strongest first, each with its text's index, position, token, activation and context (the tokens around it, the token in «»)."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let sae = try saeArgument(&arguments).sae
        guard let feature = try arguments.labelledInteger("feature"), (0..<sae.featureCount).contains(feature) else {
            throw LumenError(.value, "feature: needs one of the SAE's \(sae.featureCount) features (0…\(sae.featureCount - 1))", at: context.location)
        }
        let (textsValue, textsLocation) = try arguments.requireLabelled("texts")
        let elements = (try? Operators.elements(of: textsValue, at: textsLocation)) ?? [textsValue]
        let texts = try elements.map { element throws(LumenError) in
            guard case .string(let text) = element else { throw LumenError(.type, "texts: holds Strings, not \(element.typeName)", at: textsLocation) }
            return text
        }
        let count = try arguments.labelledInteger("count") ?? 10
        try arguments.finish()
        guard (1...maximumTopActivations).contains(count) else {
            throw LumenError(.value, "count: takes 1 to \(maximumTopActivations), got \(count)", at: context.location)
        }
        guard (1...maximumTopActivations).contains(texts.count) else {
            throw LumenError(.value, "texts: takes 1 to \(maximumTopActivations) texts, got \(texts.count)", at: textsLocation)
        }
        var found: [(text: Int, position: Int, activation: Float, pieces: [String])] = []
        for (index, text) in texts.enumerated() {
            try Task.checkCancellation()
            let activations = try await featureActivations(model, sae, text, at: context.location)
            let pieces = activations.labels[0] ?? []
            for position in 0..<activations.shape[0] {
                let value = activations.values[position * sae.featureCount + feature]
                if value != 0 { found.append((index, position, value, pieces)) }
            }
        }
        let strongest = found.sorted { ($0.activation, -$0.text, -$0.position) > ($1.activation, -$1.text, -$1.position) }.prefix(count)
        return .array(strongest.map { entry in
            let before = entry.pieces[max(0, entry.position - 8)..<entry.position].joined()
            let after = entry.pieces[(entry.position + 1)..<min(entry.pieces.count, entry.position + 5)].joined()
            return .dictionary(LumenDictionary([
                ("text", .integer(entry.text)), ("position", .integer(entry.position)), ("token", .string(entry.pieces[entry.position])),
                ("activation", .double(Double(entry.activation))), ("context", .string(before + "«" + entry.pieces[entry.position] + "»" + after)),
            ]))
        })
    }

    /// The most texts `topActivations` reads, and the most positions it lists.
    static let maximumTopActivations = 10_000

    /// `sae`'s feature activations over `prompt` on `model`: [position][feature], positions
    /// labelled with the tokens.
    static func featureActivations(_ model: LoadedModel, _ sae: SparseAutoencoder, _ prompt: String, at location: SourceLocation) async throws -> Tensor {
        let container = try modelCall(at: location) { () throws(ModelError) in try model.container() }
        let c = container.model.configuration
        try modelCall(at: location) { () throws(ModelError) in try sae.check(fits: c, file: container.model.gguf.path) }
        let tokens = container.tokenize(prompt)
        let plan = ActivationTrace(points: [sae.point], blocks: [sae.block ?? 0], configuration: c)
        let capture = plan.capture(tokens: tokens.count)
        do {
            _ = try await container.withSession { session in try await session.evaluate(tokens, hooks: [capture]) }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: location)
        }
        let pieces = tokens.map { container.model.tokenizer.textPiece($0) }
        guard let kept = plan.tensors(from: capture, labels: pieces)[sae.point] else {
            throw LumenError(.model, "the run kept no \(sae.point.rawValue) activations", at: location)
        }
        let rows = Tensor(kept.values, shape: [tokens.count, sae.inputWidth], axes: ["position", "width"], labels: [pieces, nil])
        do {
            return try await TensorThread.shared.run { () throws(TensorError) in try sae.encode(rows) }
        } catch {
            throw LumenError(.value, error.description, at: location)
        }
    }

    static let saeQuality = Builtin(
        name: "saeQuality",
        signature: "saeQuality(_ model, _ sae: SAE, _ text: String) -> [String: Double]",
        summary: "How well the SAE reconstructs the model's activations over the text, as SAELens' evals measure it (the BOS position left out): mse (‖x − x̂‖² summed over the row, averaged over positions), explainedVariance, l0 (features firing per position), and the next-token cross-entropy of the clean run (ceLossClean), with the hook's activations replaced by the SAE's reconstruction (ceLossSpliced) and zeroed (ceLossAblated); ceLossScore = (ablated − spliced) / (ablated − clean). Three passes over the text, which must fit the context."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let sae = try saeArgument(&arguments).sae
        let text = try arguments.string(try arguments.requirePositional("text"), "text")
        try arguments.finish()
        let container = try modelCall(at: context.location) { () throws(ModelError) in try model.container() }
        let tokens = container.tokenize(text)
        let bos = container.model.tokenizer.vocabulary.bos.map { Set([$0]) } ?? []
        let quality = try await onSession(of: model, at: context.location) { session throws(ModelError) in
            try await session.quality(of: sae, tokens: tokens, excluded: bos)
        }
        let entries: [(String, Value)] = [
            ("positions", .integer(quality.positions)), ("mse", .double(quality.meanSquaredError)), ("explainedVariance", .double(quality.explainedVariance)),
            ("l0", .double(quality.l0)), ("ceLossClean", .double(quality.cleanLoss)), ("ceLossSpliced", .double(quality.splicedLoss)),
            ("ceLossAblated", .double(quality.ablatedLoss)), ("ceLossScore", .double(quality.lossScore)),
        ]
        return .dictionary(LumenDictionary(entries))
    }

    static let setFeature = Builtin(
        name: "setFeature",
        signature: "setFeature(_ sae: SAE, feature: Int, value: Number = 0, positions: [Int]? = nil) -> Intervention",
        summary: "An intervention for trace(…, interventions:) and generate(…, interventions:): sets one of the SAE's features to value at the SAE's hook — at every position or positions: (from 0) —, keeping what the SAE does not reconstruct (SAELens' hooked SAE with its error term: decode(f′) + x − decode(f)). value: 0 (the default) ablates the feature; a large value clamps it on. The run log keeps the SAE's path, and replay reads it again."
    ) { arguments, context in
        let object = try saeArgument(&arguments)
        let sae = object.sae
        guard let feature = try arguments.labelledInteger("feature"), (0..<sae.featureCount).contains(feature) else {
            throw LumenError(.value, "feature: needs one of the SAE's \(sae.featureCount) features (0…\(sae.featureCount - 1))", at: context.location)
        }
        let value = try arguments.labelledNumber("value") ?? 0
        guard value.isFinite else { throw LumenError(.value, "value: must be a finite number, got \(value)", at: context.location) }
        let positions = try positionsFromZero(&arguments)
        try arguments.finish()
        let logged = RunIntervention(settingFeature: feature, of: object.path, saeInputScale: object.inputScale, point: sae.point.rawValue,
                                     block: sae.block ?? 0, positions: positions, value: value)
        return .host(InterventionObject(logged, sae: sae))
    }

    static let encode = Builtin(
        name: "encode",
        signature: "encode(_ sae: SAE, _ x: Tensor) -> Tensor",
        summary: "The SAE's feature activations of x, whose last axis is d_in wide (SAELens' encode): the same leading axes, then d_sae features."
    ) { arguments, context in
        let sae = try saeArgument(&arguments).sae
        let x = try TensorLibrary.tensorArgument(&arguments, "x")
        try arguments.finish()
        return try await TensorLibrary.computed(elements: .max, at: context.location) { () throws(TensorError) in try sae.encode(x) }
    }

    static let decode = Builtin(
        name: "decode",
        signature: "decode(_ sae: SAE, _ f: Tensor) -> Tensor",
        summary: "The SAE's reconstruction of feature activations f, whose last axis is d_sae wide (SAELens' decode): the same leading axes, then d_in."
    ) { arguments, context in
        let sae = try saeArgument(&arguments).sae
        let f = try TensorLibrary.tensorArgument(&arguments, "f")
        try arguments.finish()
        return try await TensorLibrary.computed(elements: .max, at: context.location) { () throws(TensorError) in try sae.decode(f) }
    }

    static let direction = Builtin(
        name: "direction",
        signature: "direction(_ sae: SAE, _ feature: Int) -> Tensor",
        summary: "Feature i's direction: its row of the SAE's decoder, d_in wide (what feature steering adds)."
    ) { arguments, context in
        let sae = try saeArgument(&arguments).sae
        let (value, location) = try arguments.requirePositional("feature")
        try arguments.finish()
        guard case .integer(let feature) = value else { throw LumenError(.type, "feature: needs an Int, got \(value.typeName)", at: location) }
        do {
            return .host(TensorObject(try sae.direction(feature)))
        } catch {
            throw LumenError(.value, "\(error)", at: location)
        }
    }

    /// The positional argument `sae`, an SAE.
    private static func saeArgument(_ arguments: inout Arguments) throws(LumenError) -> SAEObject {
        try hostObject(&arguments, "sae", "an SAE (from loadSAE)")
    }
}
