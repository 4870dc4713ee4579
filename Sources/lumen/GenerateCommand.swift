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

    @Option(name: .customShort("n"), help: "The most tokens to generate.")
    var maxTokens = 128

    @Option(name: .customLong("temp"), help: "Temperature (0: greedy).")
    var temperature: Float = 0.8

    @Option(help: "Random seed (default: a new one each run).")
    var seed: UInt64?

    @Option(name: .customLong("top-k"), help: "Keep the k most likely tokens (0: all).")
    var topK = 40

    @Option(name: .customLong("top-p"), help: "Nucleus sampling threshold (1: off).")
    var topP: Float = 0.95

    @Option(name: .customLong("min-p"), help: "Drop tokens below min-p times the best (0: off).")
    var minP: Float = 0.05

    @Option(name: .customLong("repeat-penalty"), help: "Repetition penalty (1: off).")
    var repeatPenalty: Float = 1.0

    @Option(name: .customShort("t"), help: "Threads for matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("ctx"), help: "Context length (default: the model's).")
    var contextLength: Int?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard maxTokens >= 0 else { throw ValidationError("-n must be 0 or more") }
        guard threads >= 1 else { throw ValidationError("-t must be at least 1") }
        guard temperature >= 0, (0...1).contains(topP), minP >= 0, repeatPenalty > 0 else {
            throw ValidationError("--temp and --min-p must be ≥ 0, --top-p in 0…1, --repeat-penalty > 0")
        }
    }

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.generate")
        let session = ModelSession(model: try LlamaModel(path: model), contextLength: contextLength, threads: threads)
        let options = GenerationOptions(
            sampling: SamplingOptions(temperature: temperature, topK: topK, topP: topP, minP: minP,
                                      repeatPenalty: repeatPenalty, seed: seed ?? UInt64.random(in: 0...UInt64.max)),
            maxTokens: maxTokens
        )
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
