import ArgumentParser
import Executors
import Foundation
import Inference

/// `lumen bench MODEL`: prompt-processing and generation speed, modelled on llama-bench.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure prompt processing and generation speed (tokens per second), like llama-bench."
    )

    @Argument(help: "Path of a GGUF model file.")
    var model: String

    @Option(name: .customShort("p"), help: "Prompt tokens to process (0 skips the test).")
    var promptTokens = 128

    @Option(name: .customShort("n"), help: "Tokens to generate (0 skips the test).")
    var generatedTokens = 128

    @Option(name: .customShort("t"), parsing: .singleValue, help: "Thread counts, comma-separated (e.g. 1,2).")
    var threads: [String] = ["\(ProcessInfo.processInfo.activeProcessorCount)"]

    @Option(name: .customShort("r"), help: "Repetitions of each test.")
    var repetitions = 3

    @Flag(help: "Print the results as JSON.")
    var json = false

    @Flag(help: "Also measure memory read bandwidth at each thread count and report generation as a fraction of its ceiling (bandwidth ÷ bytes read per token).")
    var bandwidth = false

    /// One row of results.
    struct Result: Codable {
        let model: String
        let sizeBytes: Int
        let parameters: Int
        let types: String
        let threads: Int
        let test: String
        let tokens: Int
        let tokensPerSecondMean: Double
        let tokensPerSecondSD: Double
        let samples: [Double]
        /// Bytes of KV cache and buffers of the session measured (its context is -p + -n + 1).
        let sessionBytes: Int
        /// With `--bandwidth`, on generation rows: the measured read bandwidth (GB/s), the bytes
        /// of weights a token reads, and the best sample as a fraction of bandwidth ÷ bytes.
        var bandwidthGBPerSecond: Double?
        var bytesPerToken: Int?
        var fractionOfBandwidthLimit: Double?
    }

    var threadCounts: [Int] {
        threads.flatMap { $0.split(separator: ",") }.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    func validate() throws {
        guard !threadCounts.isEmpty, threadCounts.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("-t takes thread counts of 1 or more, e.g. -t 1,2")
        }
        guard promptTokens >= 0, generatedTokens >= 0, repetitions >= 1 else {
            throw ValidationError("-p and -n must be 0 or more, -r at least 1")
        }
    }

    func run() async throws {
        let llama = try LanguageModel(path: model)
        let info = ModelInfo(model: llama)
        let context = promptTokens + generatedTokens + 1
        guard context <= llama.configuration.contextLength else {
            throw ValidationError("-p + -n (\(context - 1)) exceed the model's context of \(llama.configuration.contextLength)")
        }
        var random = SystemRandomNumberGenerator()
        let vocabulary = Int32(llama.configuration.vocabularySize)
        let prompt = [llama.tokenizer.vocabulary.bos ?? 0] + (1..<max(1, promptTokens)).map { _ in Int32.random(in: 3..<vocabulary, using: &random) }
        let generation = [llama.tokenizer.vocabulary.bos ?? 0] + (1..<max(1, generatedTokens)).map { _ in Int32.random(in: 3..<vocabulary, using: &random) }
        var results: [Result] = []
        if !json { print(Self.header) }
        for threadCount in threadCounts {
            // Streaming a gigabyte takes seconds: it runs on a thread of its own, off the cooperative pool.
            let measuredBandwidth = bandwidth ? await DedicatedThread.run(name: "lumen-bandwidth") { MemoryBandwidth.measure(threads: threadCount) } : nil
            let session = ModelSession(model: llama, contextLength: context, threads: threadCount, batchSize: max(1, min(promptTokens, 512)))
            let tests: [(String, Int, () async throws -> Double)] = [
                ("pp\(promptTokens)", promptTokens, { try await session.timePromptProcessing(prompt) }),
                ("tg\(generatedTokens)", generatedTokens, { try await session.timeGeneration(generation) }),
            ].filter { $0.1 > 0 }
            for (name, tokens, measure) in tests {
                _ = try await measure()
                var samples: [Double] = []
                for _ in 0..<repetitions { samples.append(Double(tokens) / (try await measure())) }
                let mean = samples.reduce(0, +) / Double(samples.count)
                let variance = samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, samples.count - 1))
                var result = Result(
                    model: URL(fileURLWithPath: model).lastPathComponent, sizeBytes: info.fileSize, parameters: llama.parameterCount,
                    types: info.tensorTypes.map { $0.type.description }.joined(separator: "/"), threads: threadCount,
                    test: name, tokens: tokens, tokensPerSecondMean: mean, tokensPerSecondSD: variance.squareRoot(), samples: samples,
                    sessionBytes: session.stateByteCount
                )
                if let measuredBandwidth, name.hasPrefix("tg") {
                    result.bandwidthGBPerSecond = measuredBandwidth / 1e9
                    result.bytesPerToken = llama.bytesReadPerToken
                    result.fractionOfBandwidthLimit = (samples.max() ?? 0) * Double(llama.bytesReadPerToken) / measuredBandwidth
                }
                results.append(result)
                if !json { print(row(results[results.count - 1])) }
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        }
    }

    private static let header = "| model | size | params | types | threads | test | t/s |\n|---|---:|---:|---|---:|---|---:|"

    private func row(_ result: Result) -> String {
        let line = String(format: "| %@ | %@ | %@ | %@ | %d | %@ | %.2f ± %.2f |", result.model, ModelInfo.bytes(result.sizeBytes),
                          ModelInfo.count(result.parameters), result.types, result.threads, result.test,
                          result.tokensPerSecondMean, result.tokensPerSecondSD)
        guard let gigabytes = result.bandwidthGBPerSecond, let bytes = result.bytesPerToken, let fraction = result.fractionOfBandwidthLimit else { return line }
        return line + String(format: " read %.1f GB/s, %@/token: best %.0f%% of the bandwidth limit", gigabytes, ModelInfo.bytes(bytes), 100 * fraction)
    }
}
