import ArgumentParser
import Foundation
import Inference
import LumenKit
import ModelBuiltins
import RunLog
import Scoring

/// `lumen kld BASE OTHER FILE`: how a model's distributions diverge from a base model's over a
/// text file, in memory, with llama-perplexity --kl-divergence's statistics.
struct KLDivergenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kld",
        abstract: "Compare a model's next-token distributions with a base model's over a text file (llama-perplexity --kl-divergence's statistics).",
        discussion: """
        Both models score the same windows as `lumen perplexity`; the base's distributions are kept \
        in memory one window at a time, never written to disk. The models must share a vocabulary \
        (formats of one model: F32 against Q4_K_M, say).
        """
    )

    @ArgumentParser.Argument(help: "The base GGUF model (the reference, usually the unquantized one): a path or a name, as load() takes.")
    var base: String

    @ArgumentParser.Argument(help: "The GGUF model to compare with it: a path or a name.")
    var other: String

    @OptionGroup var scoring: ScoringArguments

    @OptionGroup(title: "LoRA adapters (applied to OTHER: `lumen kld M M --lora A.gguf` measures what adapter A changes)") var lora: LoRAArguments

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.kld")
        let log = await global.openRunLog(logger: logger)
        let (baseModel, otherModel) = (try await scoring.container(base), try await scoring.container(other, lora: lora))
        let summary = try await baseModel.withSession { baseSession in
            try await otherModel.withSession { otherSession in
                let (tokens, windows) = try await scoring.windows(base: baseSession, other: otherSession)
                FileHandle.standardError.write(Data("kld: \(tokens.count) tokens, \(windows.windows.count) windows of \(scoring.context), scoring \(windows.scoredCount)\n".utf8))
                let count = windows.windows.count
                let divergences = try await ScoringArguments.interruptibly {
                    try await TextScoring.divergences(of: tokens, windows: windows, base: baseSession, model: otherSession) { done in
                        FileHandle.standardError.write(Data("\rwindow \(done)/\(count)".utf8))
                    }
                }
                FileHandle.standardError.write(Data("\n".utf8))
                return DivergenceSummary(divergences)
            }
        }
        print(summary.report)
        log?.record(RunRecord(kind: .comparison, entry: "lumen kld", origin: RunOrigin(frontEnd: "cli"), model: RunModel(otherModel.model),
                              baseModel: RunModel(baseModel.model), prompt: "file: " + scoring.file, value: summary.meanKLDivergence.value,
                              figures: summary.figures))
        await log?.flush()
    }
}
