import GenerationTypes
import Testing
@testable import Inference

@Suite("Collecting a generation")
struct GenerationCollectorTests {
    @Test("a session's stream collects to the tokens it streamed, their text, and its summary")
    func collectsASessionsStream() async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), contextLength: 64, threads: 1)
        var options = GenerationOptions()
        options.maxTokens = 12
        options.sampling.temperature = 0
        var streamed: [GeneratedToken] = []
        let collected = try await GenerationCollector.collect(session.generate("Once upon a time", options: options)) { streamed.append($0) }
        #expect(collected.tokens == streamed && collected.tokens.count == 12)
        #expect(collected.text == streamed.map(\.text).joined())
        #expect(collected.summary?.generatedTokens == 12 && collected.summary?.finishReason == .length)
        // The same text as llama.cpp's greedy continuation of this prompt starts with.
        #expect(collected.text.hasPrefix(", there was a little"))
    }
}
