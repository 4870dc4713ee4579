import Foundation
import GGUF
import Testing
@testable import Inference

/// The logit lens on both real models, against the model's own logits and llama.cpp's greedy
/// token after the same prompt (`reference/inside/<model>-acts.json`).
@Suite("Logit lens")
struct LogitLensTests {
    @Test("the last block's lens is the model's own prediction, llama.cpp's greedy token first", arguments: ForwardHookTests.models)
    func lastBlockIsTheModel(model: (name: String, file: String)) async throws {
        let llama = try LanguageModel(path: try TestData.realModel(model.file))
        let root = try ForwardHookTests.reference("\(model.name)-acts")
        let tokens = try #require(root["tokens"] as? [Int]).map(Int32.init)
        let greedy = Int32(try #require((root["greedy"] as? [Int])?.first))
        let session = ModelSession(model: llama, contextLength: 64, threads: 2)
        let lens = try await session.logitLens(tokens, top: 5, tracking: [greedy, greedy])
        #expect(lens.top.count == llama.configuration.blockCount && lens.top.allSatisfy { $0.count == tokens.count && $0.allSatisfy { $0.count == 5 } })
        let own = LogSoftmax.top(try await session.evaluate(tokens), k: 5)
        let last = try #require(lens.top.last?.last)
        #expect(last[0].id == greedy && own[0].id == greedy)
        for (lensed, model) in zip(last, own) {
            #expect(abs(lensed.probability - exp(model.logProbability)) <= 1e-3, "lens \(lensed), model \(model)")
        }
        // The tracked token's probability is the one the top-k gives it, at every block and position.
        let tracked = try #require(lens.tracked[greedy])
        #expect(lens.tracked.count == 1 && tracked.count == lens.top.count)
        for (block, positions) in lens.top.enumerated() {
            for (position, predictions) in positions.enumerated() {
                if let entry = predictions.first(where: { $0.id == greedy }) {
                    #expect(abs(tracked[block][position] - entry.probability) <= 1e-6)
                } else {
                    #expect(tracked[block][position] <= predictions[4].probability + 1e-6)
                }
            }
        }
        await #expect(throws: ModelError.self) { try await session.logitLens(tokens, top: 1, tracking: [-1]) }
    }
}
