import Testing
@testable import Inference

@Suite("Speed tests")
struct SpeedTestTests {
    @Test("names follow llama-bench; a run gives one sample per repetition after an untimed warm-up")
    func namesAndSamples() async throws {
        #expect(SpeedTest.promptProcessing(512).name == "pp512")
        #expect(SpeedTest.generation(128, depth: 1024).name == "tg128 @ d1024")
        #expect(SpeedTest.promptProcessing(8, depth: 4).tokenCount == 12)
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), contextLength: 32, threads: 1)
        let tokens: [Int32] = Array(1...20)
        for test in [SpeedTest.promptProcessing(8, depth: 4), .generation(6)] {
            let samples = try await test.measure(on: session, tokens: tokens, repetitions: 3)
            #expect(samples.tokensPerSecond.count == 3 && samples.tokensPerSecond.allSatisfy { $0 > 0 && $0.isFinite })
        }
    }

    @Test("mean and sample standard deviation, as Python's statistics.stdev gives them")
    func statistics() {
        // statistics.mean([10, 12, 23, 23, 16, 23, 21, 16]) == 18, statistics.stdev(...) == 5.237229365663818
        let samples = SpeedSamples(tokensPerSecond: [10, 12, 23, 23, 16, 23, 21, 16])
        #expect(samples.mean == 18)
        #expect(abs(samples.standardDeviation - 5.237229365663818) < 1e-12)
        #expect(SpeedSamples(tokensPerSecond: [7]).standardDeviation == 0)
    }
}
