import Executors
import Foundation
import GGUF
import Inference
import LumenLanguage
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
        return .host(SAEObject(sae: sae, path: path))
    }

    static let features = Builtin(
        name: "features",
        signature: "features(_ model, _ sae: SAE, _ prompt: String) -> Tensor",
        summary: "The SAE's feature activations at each of the prompt's tokens: the model runs the prompt, the SAE encodes the activations at its hook. A Tensor [position][feature], its positions labelled with the tokens."
    ) { arguments, context in
        let model = try loadedModel(&arguments)
        let object = try saeArgument(&arguments)
        let prompt = try arguments.string(try arguments.requirePositional("prompt"), "prompt")
        try arguments.finish()
        let container = try modelCall(at: context.location) { () throws(ModelError) in try model.container() }
        let sae = object.sae
        let c = container.model.configuration
        try check(sae, fits: c, at: context.location)
        let tokens = container.tokenize(prompt)
        let plan = ActivationTrace(points: [sae.point], blocks: [sae.block ?? 0], configuration: c)
        let capture = plan.capture(tokens: tokens.count)
        do {
            _ = try await container.withSession { session in try await session.evaluate(tokens, hooks: [capture]) }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw LumenError(.model, "\(error)", at: context.location)
        }
        let pieces = tokens.map { container.model.tokenizer.textPiece($0) }
        guard let kept = plan.tensors(from: capture, labels: pieces)[sae.point] else {
            throw LumenError(.model, "the run kept no \(sae.point.rawValue) activations", at: context.location)
        }
        let rows = Tensor(kept.values, shape: [tokens.count, sae.inputWidth], axes: ["position", "width"], labels: [pieces, nil])
        return try await TensorLibrary.computed(elements: .max, at: context.location) { () throws(TensorError) in try sae.encode(rows) }
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

    /// Refuses an SAE whose hook the model of configuration `c` does not have, or whose d_in is
    /// not the width of the model's activations there.
    static func check(_ sae: SparseAutoencoder, fits c: ModelConfiguration, at location: SourceLocation) throws(LumenError) {
        guard sae.point != .attentionProbabilities, sae.point != .logits else {
            throw LumenError(.value, "an SAE over \(sae.point.rawValue) is not read", at: location)
        }
        if let block = sae.block, let misfit = c.blockMisfit(block) {
            throw LumenError(.value, "the SAE reads \(sae.hookName), but \(misfit)", at: location)
        }
        let width = sae.point.width(in: c, layer: sae.block ?? 0, contextLength: 1)
        guard width == sae.inputWidth else {
            throw LumenError(.value, "the SAE's d_in is \(sae.inputWidth), but the model's \(sae.hookName) is \(width) wide: an SAE of another model", at: location)
        }
    }
}
