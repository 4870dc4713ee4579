import ArgumentParser
import Foundation
import GGUF
import Inference
import Quantization
import Terminal

/// `lumen export-lora MODEL --lora F -o OUT`: a copy of a model with LoRA adapters merged into its
/// weights (llama.cpp's `llama-export-lora`).
struct ExportLoRACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-lora",
        abstract: "Write a copy of a GGUF model with LoRA adapters merged into its weights.",
        discussion: """
            As llama.cpp's llama-export-lora: each weight an adapter adapts becomes W + Σ scale × \
            alpha / rank × B A (the adapters in the order given), computed in F32. Unlike \
            llama-export-lora, which writes every merged weight as F16, each is quantized back to \
            its own type (a type Lumen reads but does not write becomes F16), so the merged model \
            keeps the base's size; every other tensor and the metadata are copied byte for byte. \
            The adapters are checked against the model first, as --lora checks them. The file is \
            written under a temporary name and renamed.
            """
    )

    @Argument(help: "The base GGUF model: a path, or a name found as load() finds it.")
    var model: String

    @Option(name: [.short, .long], help: "Where to write the merged model.")
    var output: String

    @OptionGroup(title: "LoRA adapters (merged, at least one)") var lora: LoRAArguments

    @Option(name: [.short, .long], help: "Threads that merge and quantize each weight's rows.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if lora.files.isEmpty { throw ValidationError("give the adapters to merge with --lora FILE or --lora-scaled FILE:SCALE") }
        if FileIdentity.same((try? ModelLocator.resolve(model)) ?? model, output) {
            throw ValidationError("\(output) is the base model itself; writing there would replace it. Choose another --output")
        }
    }

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.export-lora")
        let base = try LanguageModel(gguf: GGUFFile(path: ModelLocator.resolve(model)))
        let adapters = try AdapterSet(files: lora.files, for: base)
        let bar = TerminalProgressBar()
        let summary = try ModelQuantizer(scheme: nil, adapters: adapters, threads: threads).quantize(base.gguf, to: output) { progress in
            bar.show(done: progress.completed, of: progress.total, label: progress.tensor)
        }
        bar.finish()
        let merged = Set(adapters.entries.flatMap(\.adapter.adaptedTensors)).count
        print("\(output): \(merged) weights merged with \(adapters.entries.count) adapter\(adapters.entries.count == 1 ? "" : "s"), "
              + String(format: "%.2f MB", Double(summary.outputBytes) / 1_000_000))
    }
}
