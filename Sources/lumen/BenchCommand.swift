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

    @Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @Option(name: .customShort("p"), parsing: .singleValue, help: "Prompt sizes to process, comma-separated (0 skips the test).")
    var promptSizes: [String] = ["512"]

    @Option(name: .customShort("n"), parsing: .singleValue, help: "Numbers of tokens to generate, comma-separated (0 skips the test).")
    var generationSizes: [String] = ["128"]

    @Option(name: .customShort("d"), parsing: .singleValue, help: "Depths: tokens already in the cache before each test, comma-separated.")
    var depths: [String] = ["0"]

    @Option(name: .customShort("t"), parsing: .singleValue, help: "Thread counts, comma-separated (e.g. 1,2).")
    var threads: [String] = ["\(ProcessInfo.processInfo.activeProcessorCount)"]

    @Option(name: .customShort("r"), help: "Repetitions of each test.")
    var repetitions = 5

    @Option(name: .customShort("o"), help: "Output format: md, csv, json or jsonl (llama-bench's fields).")
    var output: BenchOutput = .md

    @OptionGroup(title: "KV cache") var cache: CacheTypeArguments

    @Flag(help: "Same as -o json.")
    var json = false

    @Option(name: [.customLong("parallel"), .customLong("npl", withSingleDash: true)], parsing: .singleValue,
            help: "Sequences decoding together, comma-separated (e.g. 1,2,4,8): llama-batched-bench's measurement and table instead, each sequence reading the first -p prompt and generating the first -n tokens.")
    var parallel: [String] = []

    @Flag(help: "Also measure memory read bandwidth at each thread count and report generation as a fraction of its ceiling (bandwidth ÷ bytes read per token).")
    var bandwidth = false

    /// Comma-separated integers from a list option, e.g. `["128,512"]` → `[128, 512]`.
    static func integers(_ values: [String]) -> [Int]? {
        let numbers = values.flatMap { $0.split(separator: ",") }.map { Int($0.trimmingCharacters(in: .whitespaces)) }
        return numbers.contains(nil) ? nil : numbers.compactMap { $0 }
    }

    func validate() throws {
        guard let threadCounts = Self.integers(threads), !threadCounts.isEmpty, threadCounts.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("-t takes thread counts of 1 or more, e.g. -t 1,2")
        }
        for (flag, list) in [("-p", promptSizes), ("-n", generationSizes), ("-d", depths)] {
            guard let numbers = Self.integers(list), !numbers.isEmpty, numbers.allSatisfy({ $0 >= 0 }) else {
                throw ValidationError("\(flag) takes counts of 0 or more, comma-separated, e.g. \(flag) 128,512")
            }
        }
        guard repetitions >= 1 else { throw ValidationError("-r must be at least 1") }
        if !parallel.isEmpty {
            guard let counts = Self.integers(parallel), counts.allSatisfy({ (1...256).contains($0) }) else {
                throw ValidationError("--parallel takes counts of 1 to 256 sequences, comma-separated, e.g. --parallel 1,2,4,8")
            }
            guard Self.integers(promptSizes)?.first ?? 0 > 0, Self.integers(generationSizes)?.first ?? 0 > 0 else {
                throw ValidationError("--parallel needs a prompt (-p) and tokens to generate (-n) of 1 or more")
            }
            guard [.md, .jsonl].contains(json ? .json : output) else { throw ValidationError("--parallel prints -o md or jsonl") }
        }
    }

    @OptionGroup(title: "LoRA adapters") var lora: LoRAArguments

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        _ = global.bootstrapLogging(label: "lumen.bench")
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        let adapters = try await lora.adapters(for: llama)
        let cacheType = try cache.resolved(for: llama, name: model)
        if let counts = Self.integers(parallel), !counts.isEmpty {
            try await runParallel(llama, counts: counts, adapters: adapters, cacheType: cacheType)
            return
        }
        let info = ModelInfo(model: llama)
        let prompts = Self.integers(promptSizes)?.filter { $0 > 0 } ?? [], generations = Self.integers(generationSizes)?.filter { $0 > 0 } ?? []
        let depthList = Self.integers(depths) ?? [0], threadCounts = Self.integers(threads) ?? [1]
        let context = (depthList.max() ?? 0) + max(prompts.max() ?? 0, generations.max() ?? 0) + 1
        guard context <= llama.configuration.contextLength else {
            throw ValidationError("-d + the largest -p or -n (\(context - 1)) exceed the model's context of \(llama.configuration.contextLength)")
        }
        var random = SystemRandomNumberGenerator()
        let vocabulary = Int32(llama.configuration.vocabularySize)
        let tokens = (0..<context).map { _ in Int32.random(in: 3..<vocabulary, using: &random) }
        let format = json ? .json : output
        var results: [BenchResult] = []
        if let header = format.header { print(header) }
        let progress = isatty(STDERR_FILENO) != 0
        for threadCount in threadCounts {
            // Streaming a gigabyte takes seconds: it runs on a thread of its own, off the cooperative pool.
            let measuredBandwidth = bandwidth ? await DedicatedThread.run(name: "lumen-bandwidth") { MemoryBandwidth.measure(threads: threadCount) } : nil
            let session = ModelSession(model: llama, contextLength: context, threads: threadCount, batchSize: max(1, min(prompts.max() ?? 1, 512)),
                                       cacheType: cacheType, adapters: adapters)
            for depth in depthList {
                let tests = prompts.map { SpeedTest.promptProcessing($0, depth: depth) } + generations.map { SpeedTest.generation($0, depth: depth) }
                for test in tests {
                    let result = BenchResult(model: model, info: info, parameters: llama.parameterCount, threads: threadCount,
                                             test: test, sessionBytes: session.stateByteCount)
                    if progress { FileHandle.standardError.write(Data("lumen bench: \(test.name), \(threadCount) threads…\r".utf8)) }
                    let samples = try await test.measure(on: session, tokens: tokens, repetitions: repetitions)
                    var finished = result.with(samples)
                    if let measuredBandwidth, test.generatedTokens > 0 {
                        finished.bandwidthGBPerSecond = measuredBandwidth / 1e9
                        finished.bytesPerToken = llama.bytesReadPerToken
                        finished.fractionOfBandwidthLimit = (samples.tokensPerSecond.max() ?? 0) * Double(llama.bytesReadPerToken) / measuredBandwidth
                    }
                    if progress { FileHandle.standardError.write(Data("\u{1B}[2K".utf8)) }
                    results.append(finished)
                    if let line = try format.line(finished) { print(line) }
                }
            }
        }
        if format == .json { print(try format.document(results)) }
    }

    /// `--parallel`: llama-batched-bench's measurement of `counts` sequences decoding together.
    private func runParallel(_ llama: LanguageModel, counts: [Int], adapters: AdapterSet, cacheType: KVCacheType) async throws {
        let prompt = Self.integers(promptSizes)?.first ?? 1, generated = Self.integers(generationSizes)?.first ?? 1
        guard prompt + generated <= llama.configuration.contextLength else {
            throw ValidationError("-p + -n (\(prompt + generated)) exceed the model's context of \(llama.configuration.contextLength)")
        }
        var random = SystemRandomNumberGenerator()
        let vocabulary = Int32(llama.configuration.vocabularySize)
        let tokens = (0..<(prompt + generated)).map { _ in Int32.random(in: 3..<vocabulary, using: &random) }
        if output == .md { print(ParallelBench.header) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for threadCount in Self.integers(threads) ?? [1] {
            let session = ModelSession(model: llama, contextLength: prompt + generated, threads: threadCount, batchSize: min(prompt, 512),
                                       cacheType: cacheType, sequences: counts.max() ?? 1, adapters: adapters)
            for count in counts {
                let row = try await ParallelBench.measure(on: session, prompt: Array(tokens.prefix(prompt)), tokens: Array(tokens.suffix(generated)),
                                                          sequences: count, threads: threadCount, repetitions: repetitions)
                print(output == .md ? row.markdown : String(decoding: try encoder.encode(row), as: UTF8.self))
            }
        }
    }
}
