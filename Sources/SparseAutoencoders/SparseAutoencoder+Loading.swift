import Foundation
import GGUF
import Inference
import Tensors

extension SparseAutoencoder {
    /// The formats SAEs ship in, told apart by their files.
    enum Format {
        /// SAELens: a folder with `cfg.json` and `sae_weights.safetensors` (`W_enc`, `b_enc`,
        /// `W_dec`, `b_dec`, `threshold`).
        case saeLens(folder: String)
        /// Gemma Scope 2: `params.safetensors` (`w_enc`, `b_enc`, `w_dec`, `b_dec`, `threshold`),
        /// JumpReLU, in a folder named for its hook (`resid_post/layer_12_width_16k_l0_medium`).
        case gemmaScope(file: String)
    }

    /// SAELens' normalizations that leave the input as it is at run time (for
    /// `expected_average_only_in`, a scale folded into the weights, given or already folded).
    static let runTimeIdentityNormalizations: Set<String> = ["none", "expected_average_only_in"]

    /// Gemma Scope's folders of SAEs, by the TransformerLens hook (after `blocks.L.`) SAELens
    /// gives them.
    static let gemmaScopeHooks: [String: String] = ["resid_post": "hook_resid_post", "attn_out": "attn.hook_z", "mlp_out": "hook_mlp_out"]

    /// Reads the SAE at `path`: a SAELens folder (or its `sae_weights.safetensors`), or a Gemma
    /// Scope `params.safetensors` (or its folder). `hook` (a TransformerLens hook name) replaces
    /// the one the files give; `inputScale` folds in a scale for inputs
    /// (`foldingInputScale`), as SAELens does for `expected_average_only_in`. Blocking: run it
    /// off the cooperative pool.
    ///
    /// - Throws: `ModelError` naming the file and what is wrong: a missing tensor or setting, a
    ///   width that does not fit, an architecture or normalization SAELens has and Lumen does not
    ///   read yet, a hook name of no point.
    public static func load(path: String, hook: String? = nil, inputScale: Float? = nil) throws(ModelError) -> SparseAutoencoder {
        let sae: SparseAutoencoder
        switch try format(of: path) {
        case .saeLens(let folder): sae = try loadSAELens(folder: folder, hook: hook)
        case .gemmaScope(let file): sae = try loadGemmaScope(file: file, hook: hook)
        }
        guard let inputScale else { return sae }
        guard inputScale.isFinite, inputScale > 0 else {
            throw ModelError(file: path, field: "inputScale", reason: "\(inputScale) is not a positive finite scale")
        }
        return sae.foldingInputScale(inputScale)
    }

    /// Which format `path` holds.
    static func format(of path: String) throws(ModelError) -> Format {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ModelError(file: path, field: "file", reason: "no such file or folder")
        }
        let url = URL(fileURLWithPath: path)
        let folder = isFolder.boolValue ? url : url.deletingLastPathComponent()
        func has(_ name: String) -> Bool { FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) }
        let file = isFolder.boolValue ? nil : url.lastPathComponent
        if (file == nil || file == "sae_weights.safetensors" || file == "cfg.json") && has("cfg.json") && has("sae_weights.safetensors") {
            return .saeLens(folder: folder.path)
        }
        if file == nil && has("params.safetensors") { return .gemmaScope(file: folder.appendingPathComponent("params.safetensors").path) }
        if file == "params.safetensors" { return .gemmaScope(file: url.path) }
        throw ModelError(file: path, field: "format", reason: "not an SAE Lumen reads: a SAELens folder has cfg.json and sae_weights.safetensors, Gemma Scope's params.safetensors")
    }

    /// A SAELens folder.
    static func loadSAELens(folder: String, hook: String?) throws(ModelError) -> SparseAutoencoder {
        let configPath = URL(fileURLWithPath: folder).appendingPathComponent("cfg.json").path
        guard let data = FileManager.default.contents(atPath: configPath),
              let config = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ModelError(file: configPath, field: "cfg.json", reason: "cannot be read as a JSON object")
        }
        func failure(_ field: String, _ reason: String) -> ModelError { ModelError(file: configPath, field: field, reason: reason) }
        let architecture: Architecture
        switch config["architecture"] as? String ?? "standard" {
        case "standard": architecture = .standard
        case "jumprelu": architecture = .jumpReLU
        case "topk":
            let arguments = config["activation_fn_kwargs"] as? [String: Any]
            guard let k = config["k"] as? Int ?? arguments?["k"] as? Int else { throw failure("k", "a topk SAE needs k") }
            architecture = .topK(k)
        case let other:
            throw failure("architecture", "\(other) is not one Lumen reads yet (standard, jumprelu, topk)")
        }
        let normalization = config["normalize_activations"] as? String ?? "none"
        guard runTimeIdentityNormalizations.contains(normalization) else {
            throw failure("normalize_activations", "\(normalization) is not one Lumen reads yet (\(runTimeIdentityNormalizations.sorted().joined(separator: ", ")))")
        }
        if let head = config["hook_head_index"], !(head is NSNull) {
            throw failure("hook_head_index", "an SAE of one attention head is not read yet")
        }
        guard let hookName = hook ?? config["hook_name"] as? String else { throw failure("hook_name", "missing: give hook:") }
        let weights = try SafetensorsFile(path: URL(fileURLWithPath: folder).appendingPathComponent("sae_weights.safetensors").path)
        let sae = try make(architecture: architecture, hookName: hookName, subtractsDecoderBias: config["apply_b_dec_to_input"] as? Bool ?? true,
                           weights: weights, names: ["W_enc", "b_enc", "W_dec", "b_dec", "threshold"], configPath: configPath)
        for (field, value) in [("d_in", sae.inputWidth), ("d_sae", sae.featureCount)] {
            if let stated = config[field] as? Int, stated != value {
                throw failure(field, "cfg.json says \(stated); the weights have \(value)")
            }
        }
        return sae
    }

    /// A Gemma Scope `params.safetensors`, its hook from its folders' names unless given.
    static func loadGemmaScope(file: String, hook: String?) throws(ModelError) -> SparseAutoencoder {
        let folders = URL(fileURLWithPath: file).deletingLastPathComponent().pathComponents
        var hookName = hook
        if hookName == nil, let leaf = folders.last, let kind = folders.dropLast().last, let suffix = gemmaScopeHooks[kind],
           let layer = leaf.firstMatch(of: /layer_(\d+)/).flatMap({ Int($0.1) }) {
            hookName = "blocks.\(layer).\(suffix)"
        }
        guard let hookName else {
            throw ModelError(file: file, field: "hook", reason: "its folders (\(folders.suffix(2).joined(separator: "/"))) do not name a hook as Gemma Scope's do (resid_post/layer_12_…): give hook:")
        }
        let weights = try SafetensorsFile(path: file)
        return try make(architecture: .jumpReLU, hookName: hookName, subtractsDecoderBias: false, weights: weights,
                        names: ["w_enc", "b_enc", "w_dec", "b_dec", "threshold"], configPath: file)
    }

    /// An SAE of `weights`' tensors `names` (W_enc, b_enc, W_dec, b_dec, threshold, as the
    /// format calls them), reading `hookName`.
    private static func make(architecture: Architecture, hookName: String, subtractsDecoderBias: Bool, weights: SafetensorsFile, names: [String],
                             configPath: String) throws(ModelError) -> SparseAutoencoder {
        guard let (point, block) = ActivationPoint.parse(hookName: hookName) else {
            let examples = ActivationPoint.allCases.compactMap { $0.hookName(block: 0) }.joined(separator: ", ")
            throw ModelError(file: configPath, field: "hook_name", reason: "\(hookName) is not a hook Lumen has (\(examples); any block)")
        }
        func tensor(_ index: Int) throws(ModelError) -> Tensor {
            let (values, shape) = try weights.floats(names[index])
            return Tensor(values, shape: shape)
        }
        return try SparseAutoencoder(architecture: architecture, point: point, block: block, subtractsDecoderBias: subtractsDecoderBias,
                                     encoder: try tensor(0), encoderBias: try tensor(1), decoder: try tensor(2), decoderBias: try tensor(3),
                                     threshold: architecture == .jumpReLU ? try tensor(4) : nil, source: weights.path)
    }
}
