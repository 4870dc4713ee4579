/// One speed test as llama-bench runs it, and so as both `lumen bench` and the `bench` built-in
/// run it: one untimed run to warm the caches and the worker threads, then `repetitions` timed
/// runs, each reported in tokens per second. Prompt processing (`pp512`) runs the tokens in
/// batches; generation (`tg128`) one at a time; either after `depth` tokens put in the cache
/// untimed (`pp512 @ d1024`).
public struct SpeedTest: Sendable, Equatable {
    /// Tokens processed as a prompt, or 0.
    public let promptTokens: Int
    /// Tokens generated one at a time, or 0.
    public let generatedTokens: Int
    /// Tokens in the cache before each run.
    public let depth: Int

    /// A prompt-processing test of `tokens` tokens.
    public static func promptProcessing(_ tokens: Int, depth: Int = 0) -> SpeedTest {
        SpeedTest(promptTokens: tokens, generatedTokens: 0, depth: depth)
    }

    /// A generation test of `tokens` tokens.
    public static func generation(_ tokens: Int, depth: Int = 0) -> SpeedTest {
        SpeedTest(promptTokens: 0, generatedTokens: tokens, depth: depth)
    }

    /// llama-bench's name for the test: `pp512`, `tg128`, with ` @ d1024` at a depth.
    public var name: String {
        (promptTokens > 0 ? "pp\(promptTokens)" : "tg\(generatedTokens)") + (depth > 0 ? " @ d\(depth)" : "")
    }

    /// How many tokens the test needs: the depth's, then its own.
    public var tokenCount: Int { depth + promptTokens + generatedTokens }

    /// Runs the test on `session` with `tokens` (at least `tokenCount`: the depth's first): the
    /// warm-up, then `repetitions` samples in tokens per second.
    public func measure(on session: ModelSession, tokens: [Int32], repetitions: Int) async throws -> SpeedSamples {
        let filled = Array(tokens.prefix(depth))
        let own = Array(tokens.dropFirst(depth).prefix(promptTokens + generatedTokens))
        var samples: [Double] = []
        for run in 0...max(1, repetitions) {
            try Task.checkCancellation()
            let seconds = try await promptTokens > 0 ? session.timePromptProcessing(own, after: filled) : session.timeGeneration(own, after: filled)
            if run > 0 { samples.append(Double(own.count) / seconds) }
        }
        return SpeedSamples(tokensPerSecond: samples)
    }
}

/// The speeds a `SpeedTest` measured, with their mean and sample standard deviation.
public struct SpeedSamples: Sendable, Equatable {
    /// Tokens per second, one per timed run.
    public let tokensPerSecond: [Double]

    /// Wraps measured speeds.
    public init(tokensPerSecond: [Double]) {
        self.tokensPerSecond = tokensPerSecond
    }

    /// The mean speed.
    public var mean: Double { tokensPerSecond.reduce(0, +) / Double(max(1, tokensPerSecond.count)) }

    /// The sample standard deviation (0 for one sample).
    public var standardDeviation: Double {
        guard tokensPerSecond.count > 1 else { return 0 }
        let mean = self.mean
        return (tokensPerSecond.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(tokensPerSecond.count - 1)).squareRoot()
    }
}
