import ArgumentParser
import Inference

/// `lumen info MODEL`: what a GGUF model holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a GGUF model: architecture, parameters, tensor types, context, vocabulary."
    )

    @Argument(help: "Path of a GGUF model file.")
    var model: String

    func run() throws {
        let info = ModelInfo(model: try LanguageModel(path: model))
        let width = info.lines.map(\.0.count).max() ?? 0
        for (name, value) in info.lines {
            print(name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value)
        }
    }
}
