import ArgumentParser
import Foundation
import Inference
import LumenKit
import ModelBuiltins
import RunLog
import Scoring

/// `lumen perplexity MODEL FILE`: a model's perplexity over a text file by llama-perplexity's
/// method, printed as llama-perplexity prints it.
struct PerplexityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "perplexity",
        abstract: "Print a model's perplexity over a text file, by llama-perplexity's method and in its format.",
        discussion: """
        The text is cut into windows of --ctx tokens (BOS first when the model adds one) and each \
        window scores its second half; the running perplexity after each window is printed as \
        [1]x,[2]y,… and then "Final estimate: PPL = x +/- u". The file needs at least two windows of tokens.
        """
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @OptionGroup var scoring: ScoringArguments

    @OptionGroup(title: "LoRA adapters") var lora: LoRAArguments

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.perplexity")
        let log = await global.openRunLog(logger: logger)
        let container = try await scoring.container(model, lora: lora)
        let (result, scored) = try await container.withSession { session in
            let (tokens, windows) = try await scoring.windows(base: session)
            FileHandle.standardError.write(Data("perplexity: \(tokens.count) tokens, \(windows.windows.count) windows of \(scoring.context), scoring \(windows.scoredCount)\n".utf8))
            let result = try await ScoringArguments.interruptibly {
                try await TextScoring.perplexity(of: tokens, windows: windows, session: session) { done, estimate in
                    FileHandle.standardOutput.write(Data(String(format: "[%d]%.4f,", done, estimate.value).utf8))
                }.estimate.perplexity
            }
            return (result, windows.scoredCount)
        }
        print(String(format: "\nFinal estimate: PPL = %.4f +/- %.5f", result.value, result.uncertainty))
        log?.record(RunRecord(kind: .perplexity, entry: "lumen perplexity", origin: RunOrigin(frontEnd: "cli"), model: RunModel(container.model),
                              prompt: "file: " + scoring.file, value: result.value,
                              figures: ["uncertainty": result.uncertainty, "tokens": Double(scored), "context": Double(scoring.context)]))
        await log?.flush()
    }
}
