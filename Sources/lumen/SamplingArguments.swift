import ArgumentParser
import Foundation
import Inference

/// The sampling and length options `lumen generate` and `lumen chat` share.
struct SamplingArguments: ParsableArguments {
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

    func validate() throws {
        guard maxTokens >= 0 else { throw ValidationError("-n must be 0 or more") }
        guard threads >= 1 else { throw ValidationError("-t must be at least 1") }
        guard temperature >= 0, (0...1).contains(topP), minP >= 0, repeatPenalty > 0 else {
            throw ValidationError("--temp and --min-p must be ≥ 0, --top-p in 0…1, --repeat-penalty > 0")
        }
    }

    /// The options these arguments describe.
    var options: GenerationOptions {
        GenerationOptions(
            sampling: SamplingOptions(temperature: temperature, topK: topK, topP: topP, minP: minP,
                                      repeatPenalty: repeatPenalty, seed: seed ?? UInt64.random(in: 0...UInt64.max)),
            maxTokens: maxTokens
        )
    }
}
