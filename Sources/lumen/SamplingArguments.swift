import ArgumentParser
import Foundation
import GenerationTypes
import Inference

/// The sampling and length options `lumen generate` and `lumen chat` share. Numbers are read
/// as values even when negative (`-n -1` is refused as a negative count, not as a missing value),
/// and each out-of-range value is named on its own.
struct SamplingArguments: ParsableArguments {
    @Option(name: .customShort("n"), parsing: .unconditional, help: "The most tokens to generate.")
    var maxTokens = 128

    @Option(name: .customLong("temp"), parsing: .unconditional, help: "Temperature (0: greedy).")
    var temperature: Float = 0.8

    @Option(parsing: .unconditional, help: "Random seed (default, or -1 as llama.cpp takes it: a new one each run).")
    var seed: Int64?

    @Option(name: .customLong("top-k"), parsing: .unconditional, help: "Keep the k most likely tokens (0: all).")
    var topK = 40

    @Option(name: .customLong("top-p"), parsing: .unconditional, help: "Nucleus sampling threshold (1: off).")
    var topP: Float = 0.95

    @Option(name: .customLong("min-p"), parsing: .unconditional, help: "Drop tokens below min-p times the best (0: off).")
    var minP: Float = 0.05

    @Option(name: .customLong("repeat-penalty"), parsing: .unconditional, help: "Repetition penalty (1: off).")
    var repeatPenalty: Float = 1.0

    @Option(name: .customLong("repeat-last-n"), parsing: .unconditional, help: "How many recent tokens the penalties look at (0: off, -1: the context).")
    var repeatLastN = 64

    @Option(name: .customLong("frequency-penalty"), parsing: .unconditional, help: "Subtracted per occurrence of a recent token (0: off).")
    var frequencyPenalty: Float = 0

    @Option(name: .customLong("presence-penalty"), parsing: .unconditional, help: "Subtracted once for each recent token (0: off).")
    var presencePenalty: Float = 0

    @Option(name: [.customShort("l"), .customLong("logit-bias")], parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Adds to a token's logit: TOKEN_ID+BIAS or TOKEN_ID-BIAS (repeatable; -inf bans the token).", valueName: "TOKEN_ID(+/-)BIAS"))
    var logitBias: [String] = []

    @Option(name: .customShort("t"), parsing: .unconditional, help: "Threads for matrix products.")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("ctx"), parsing: .unconditional, help: "Context length (default: the model's).")
    var contextLength: Int?

    /// Each option's rule: whether its value holds, and the message naming it when not.
    private var rules: [(holds: Bool, message: String)] {
        func shown(_ value: Float) -> String { String(format: "%g", Double(value)) }
        return [
            (maxTokens >= 0, "-n must be 0 or more, got \(maxTokens)"),
            (temperature >= 0 && temperature.isFinite, "--temp must be 0 or more, got \(shown(temperature))"),
            (seed.map { $0 >= -1 } ?? true, "--seed must be 0 or more (or -1: a new seed), got \(seed ?? 0)"),
            (topK >= 0, "--top-k must be 0 or more, got \(topK)"),
            ((0...1).contains(topP), "--top-p must be in 0…1, got \(shown(topP))"),
            ((0...1).contains(minP), "--min-p must be in 0…1, got \(shown(minP))"),
            (repeatPenalty > 0 && repeatPenalty.isFinite, "--repeat-penalty must be more than 0, got \(shown(repeatPenalty))"),
            (repeatLastN >= -1, "--repeat-last-n must be 0 or more (or -1: the context), got \(repeatLastN)"),
            (frequencyPenalty.isFinite, "--frequency-penalty must be a finite number, got \(shown(frequencyPenalty))"),
            (presencePenalty.isFinite, "--presence-penalty must be a finite number, got \(shown(presencePenalty))"),
            (threads >= 1, "-t must be at least 1, got \(threads)"),
            (contextLength.map { $0 >= 1 } ?? true, "--ctx must be at least 1, got \(contextLength ?? 0)"),
        ]
    }

    func validate() throws {
        if let broken = rules.first(where: { !$0.holds }) { throw ValidationError(broken.message) }
        _ = try biases
    }

    /// `--logit-bias`'s values as llama.cpp reads them (`15043+1`, `15043-inf`), a token named
    /// twice getting both.
    private var biases: [Int32: Float] {
        get throws(ValidationError) {
            var biases: [Int32: Float] = [:]
            for value in logitBias {
                guard let sign = value.firstIndex(where: { $0 == "+" || $0 == "-" }), let token = Int32(value[..<sign]), token >= 0,
                      let amount = Float(value[value.index(after: sign)...]), !amount.isNaN else {
                    throw ValidationError("--logit-bias takes TOKEN_ID+BIAS or TOKEN_ID-BIAS (15043+1, 15043-inf), got '\(value)'")
                }
                biases[token, default: 0] += value[sign] == "-" ? -amount : amount
            }
            return biases
        }
    }

    /// The options these arguments describe for a model of `vocabularySize` tokens.
    ///
    /// - Throws: `ValidationError` when `--logit-bias` names a token the vocabulary lacks.
    func options(vocabularySize: Int) throws(ValidationError) -> GenerationOptions {
        let biases = try biases
        if let outside = biases.keys.sorted().first(where: { Int($0) >= vocabularySize }) {
            throw ValidationError("--logit-bias: \(outside) is not a token id (the vocabulary has \(vocabularySize))")
        }
        return GenerationOptions(
            sampling: SamplingOptions(temperature: temperature, topK: topK, topP: topP, minP: minP, repeatPenalty: repeatPenalty,
                                      repeatWindow: repeatLastN == -1 ? Int.max : repeatLastN, frequencyPenalty: frequencyPenalty,
                                      presencePenalty: presencePenalty, logitBias: biases,
                                      seed: seed.flatMap { $0 >= 0 ? UInt64($0) : nil } ?? UInt64.random(in: 0...UInt64(Int32.max))),
            maxTokens: maxTokens
        )
    }
}
