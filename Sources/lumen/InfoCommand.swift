import ArgumentParser
import GGUF
import Inference

/// `lumen info MODEL`: what a GGUF model holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a GGUF file: architecture, parameters, tensor types, context, vocabulary; for a file Lumen cannot run, what it holds and why not."
    )

    @Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.info")
        let gguf = try GGUFFile(path: ModelLocator.resolve(model))
        let lines: [(String, String)]
        do {
            lines = ModelInfo(model: try LanguageModel(gguf: gguf)).lines
        } catch {
            lines = ModelInfo.describe(gguf, failure: error)
        }
        let width = lines.map(\.0.count).max() ?? 0
        for (name, value) in lines {
            print(name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value)
        }
    }
}
