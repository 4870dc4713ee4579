import ArgumentParser
import Dispatch
import Foundation
import Inference

/// `lumen generate MODEL PROMPT`: prints tokens as they arrive, then a summary on stderr.
struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate text from a prompt, streaming tokens; Ctrl-C stops cleanly."
    )

    @Argument(help: "Path of a GGUF model file.")
    var model: String

    @Argument(help: "The prompt.")
    var prompt: String

    @OptionGroup var sampling: SamplingArguments

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.generate")
        let session = ModelSession(model: try LlamaModel(path: model), contextLength: sampling.contextLength, threads: sampling.threads)
        let options = sampling.options
        let stop = StopSignal()
        let generation = Task {
            var summary: GenerationSummary?
            for try await event in session.generate(prompt, options: options, stop: stop) {
                switch event {
                case .token(let token):
                    FileHandle.standardOutput.write(Data(token.text.utf8))
                case .finished(let finished):
                    summary = finished
                }
            }
            return summary
        }
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        interrupt.setEventHandler { stop.raise() }
        interrupt.resume()
        defer { interrupt.cancel() }
        let summary = try await generation.value
        print("")
        if let summary {
            FileHandle.standardError.write(Data((Self.describe(summary) + "\n").utf8))
        }
    }

    /// The one-line summary printed after generation.
    static func describe(_ summary: GenerationSummary) -> String {
        String(format: "[%d prompt tokens at %.1f tok/s, %d generated at %.1f tok/s, first token after %.0f ms, finished: %@]",
               summary.promptTokens, summary.promptTokensPerSecond, summary.generatedTokens,
               summary.generationTokensPerSecond, summary.timeToFirstToken * 1000, summary.finishReason.rawValue)
    }
}
