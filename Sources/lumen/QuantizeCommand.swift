import ArgumentParser
import Foundation
import GGUF
import Inference
import Quantization
import Terminal

/// `lumen quantize IN OUT TYPE`: converts a GGUF model's matrices to another format.
struct QuantizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quantize",
        abstract: "Write a copy of a GGUF model with its matrices in another format.",
        discussion: """
            TYPE is one of \(QuantizationScheme.allCases.map(\.rawValue).joined(separator: ", ")). \
            A type's name converts every matrix to it; Q3_K_M, Q4_K_M, Q5_K_S and Q5_K_M are \
            llama.cpp's mixes (Q6_K for the output matrix, and more bits for attn_v, ffn_down and \
            attn_output as llama-quantize gives them). Metadata and the tokenizer are kept; the \
            file is written under a temporary name and renamed. OUT may not be IN itself (or a \
            link to it) unless --in-place is given; even then a failure leaves IN intact.
            """
    )

    @Argument(help: "The GGUF model to read: a path, or a name found as load() finds it.")
    var input: String

    @Argument(help: "Where to write the new model.")
    var output: String

    @Argument(help: "The target format.")
    var type: String

    @Option(name: [.short, .long], help: "Threads that quantize each tensor's rows.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Flag(name: .customLong("in-place"), help: "Allow OUT to be IN itself, replacing the model with its quantized copy.")
    var inPlace = false

    func validate() throws {
        guard QuantizationScheme(name: type) != nil else {
            throw ValidationError("unknown type \(type); choose one of \(QuantizationScheme.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if !inPlace && FileIdentity.same(input, output) {
            throw ValidationError("\(output) is the input model itself; writing there would replace it. Choose another OUT, or pass --in-place to replace the model")
        }
    }

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.quantize")
        guard let scheme = QuantizationScheme(name: type) else { throw ValidationError("unknown type \(type)") }
        let model = try GGUFFile(path: ModelLocator.resolve(input))
        let bar = TerminalProgressBar()
        let summary = try ModelQuantizer(scheme: scheme, threads: threads).quantize(model, to: output, replacingInput: inPlace) { progress in
            bar.show(done: progress.completed, of: progress.total, label: "\(progress.tensor) → \(progress.type)")
        }
        bar.finish()
        let types = summary.tensorTypes.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value)×\($0.key)" }.joined(separator: ", ")
        print("\(output): \(Self.megabytes(summary.inputBytes)) → \(Self.megabytes(summary.outputBytes)) "
              + "(\(summary.sizeChange)), \(scheme), tensors \(types)")
    }

    private static func megabytes(_ bytes: Int) -> String {
        String(format: "%.2f MB", Double(bytes) / 1_000_000)
    }
}
