import ArgumentParser
import Executors
import Foundation
import GGUF
import Inference

/// llama.cpp's LoRA options, in its formats, shared by every command that runs a model:
/// `--lora FILE[,FILE…]` and `--lora-scaled FILE:SCALE[,FILE:SCALE…]`, each repeatable. The
/// adapters given are applied together to every forward pass, each with its scale (1 for
/// `--lora`), without merging.
struct LoRAArguments: ParsableArguments {
    @Option(name: .customLong("lora"), help: ArgumentHelp("Apply LoRA adapters (adapter GGUFs, as convert_lora_to_gguf.py writes them), comma-separated; repeatable.", valueName: "file[,file…]"))
    var unscaled: [String] = []

    @Option(name: .customLong("lora-scaled"),
            help: ArgumentHelp("Apply LoRA adapters, each times its scale (a negative one too: a.gguf:-0.5), comma-separated; repeatable.", valueName: "file:scale[,…]"))
    var scaled: [String] = []

    /// Each scaled file with its scale, or nil when a value is not a file and a finite scale.
    private var scaledFiles: [(path: String, scale: Float)]? {
        var pairs: [(path: String, scale: Float)] = []
        for item in scaled.flatMap({ $0.split(separator: ",") }) {
            let parts = item.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, let scale = Float(parts[1]), scale.isFinite else { return nil }
            pairs.append((String(parts[0]), scale))
        }
        return pairs
    }

    func validate() throws {
        if scaledFiles == nil {
            throw ValidationError("--lora-scaled takes FILE:SCALE pairs, comma-separated, a finite scale each, got \(scaled.joined(separator: " "))")
        }
    }

    /// The files with their scales, in the order given (`--lora` ones first).
    var files: [(path: String, scale: Float)] {
        unscaled.flatMap { $0.split(separator: ",") }.map { (path: String($0), scale: Float(1)) } + (scaledFiles ?? [])
    }

    /// The adapters read (on a thread of their own: reading files blocks) and checked against
    /// `model`; none when no file is given.
    func adapters(for model: LanguageModel) async throws -> AdapterSet {
        let files = files
        guard !files.isEmpty else { return .none }
        do {
            return try await DedicatedThread.run(name: "lumen-lora") { () throws(ModelError) in
                try AdapterSet(files: files, for: model)
            }
        } catch {
            throw CommandError(error.description)
        }
    }
}
