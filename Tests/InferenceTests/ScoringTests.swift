import Foundation
import GGUF
import Inference
import Scoring
import Testing

/// Perplexity by llama-perplexity's windows, against llama-perplexity's own figures
/// (`Tests/reference/perplexity`, scripts/make_perplexity_references.py), and the errors a text
/// that cannot be scored as asked gives.
struct ScoringTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("reference/perplexity")

    @Test func storiesPerplexityMatchesLlamaPerplexityWindowByWindow() async throws {
        let references = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("llama-perplexity.json"))) as? [String: Any]
        let cases = try #require(references?["perplexity"] as? [[String: Any]])
        let stories = try #require(cases.first { $0["model"] as? String == "models/stories260K.gguf" })
        let context = try #require(stories["context"] as? Int)
        let expected = try #require(stories["windows"] as? [Double])
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), contextLength: context, threads: 2)
        let text = try String(contentsOf: Self.folder.appendingPathComponent("story.txt"), encoding: .utf8)
        let (tokens, windows) = try TextScoring.windows(for: text, session: session, context: context)
        var running: [Double] = []
        let result = try await TextScoring.perplexity(of: tokens, windows: windows, session: session) { _, estimate in running.append(estimate.value) }
        #expect(running.count == expected.count)
        for (ours, theirs) in zip(running, expected) {
            #expect(abs(ours / theirs - 1) < 0.005, "\(running) against llama-perplexity's \(expected)")
        }
        #expect(abs(result.estimate.perplexity.uncertainty / (stories["uncertainty"] as? Double ?? 0) - 1) < 0.02)
    }

    @Test func textsThatCannotBeScoredSaySo() async throws {
        let session = ModelSession(model: try LanguageModel(path: try TestData.path("models/stories260K.gguf")), contextLength: 64, threads: 1)
        #expect(throws: ScoringError.self) { try TextScoring.windows(for: "Once upon a time", session: session, context: 64) }
        do {
            _ = try TextScoring.windows(for: "Once upon a time", session: session, context: 64)
        } catch {
            #expect(error.reason.contains("needs at least 128"), "\(error)")
            // Too short for any context of two windows of at least 4 tokens: no context to suggest.
            #expect(error.fittingContext == nil)
        }
        let story = String(repeating: "Once upon a time there was a girl. ", count: 3)
        do {
            _ = try TextScoring.windows(for: story, session: session, context: 64)
        } catch {
            let count = session.tokenize(story).count
            #expect(error.fittingContext == count / 2 && count < 128)
            #expect(try TextScoring.windows(for: story, session: session, context: count / 2).windows.windows.count == 2)
        }
        let long = String(repeating: "Once upon a time there was a girl. ", count: 40)
        let (tokens, windows) = try TextScoring.windows(for: long, session: session, context: 128)
        await #expect(throws: ModelError.self) { try await TextScoring.perplexity(of: tokens, windows: windows, session: session) }
    }
}
