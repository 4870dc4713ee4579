import Foundation
import GGUF
import Testing
@testable import Inference

/// Looking inside a model whose layers differ in shape (the synthetic Gemma 4: sliding layers 0,
/// 1, 2 and 4 with heads of 16 over 8 positions, full layers 3 and 5 with heads of 32; layers 4
/// and 5 attend over layers 2's and 3's caches), against what the file declares.
@Suite("Layers of different shapes, looked into")
struct LayerShapeTests {
    @Test("heads of the narrower sliding layers are refused in traces by name, the full layers' kept; an ablation takes its block's head width")
    func headsOfOneWidth() throws {
        let model = try LanguageModel(path: try TestData.syntheticModel("gemma4"))
        let c = model.configuration
        #expect((0..<c.blockCount).map { c.layer($0).headDimension } == [16, 16, 16, 32, 16, 32])
        #expect(c.layerShapes.map(\.slides) == [true, true, true, false, true, false])
        #expect(c.layerShapes.map(\.cacheLayer) == [0, 1, 2, 3, 2, 3])
        do {
            try ActivationCapture([.headOutputs]).check(model)
            Issue.record("heads of 16 and 32 floats kept together")
        } catch {
            #expect(error.reason == "blocks 0, 1, 2, 4 have z rows of 64 floats, the others 128; the blocks with rows of 128 are 3, 5: keep z of those (blocks:)")
        }
        try ActivationCapture([.headOutputs], blocks: [3, 5]).check(model)
        try ActivationEdit.zeroing(.headOutputs, block: 0, heads: [1], headDimension: 16).check(model)
        #expect(throws: ModelError.self) { try ActivationEdit.zeroing(.headOutputs, block: 0, heads: [1], headDimension: 32).check(model) }
    }

    @Test("a hook at a point a block never computes is refused, never silently idle: k and v of a layer reading another's cache, a mixture's mlp_post")
    func pointsABlockLacks() throws {
        let gemma = try LanguageModel(path: try TestData.syntheticModel("gemma4"))
        for hook in [ActivationEdit.zeroing(.keys, block: 4), ActivationCapture([.values], blocks: [5]) as any ForwardHook] {
            #expect { try hook.check(gemma) } throws: { ($0 as? ModelError)?.reason.contains("reads block") == true }
        }
        try ActivationEdit.zeroing(.keys, block: 2).check(gemma)
        let mixture = try LanguageModel(path: try TestData.syntheticModel("qwen3moe"))
        let expert = mixture.configuration.leadingDenseLayers
        #expect { try ActivationEdit.zeroing(.feedForwardActivation, block: expert).check(mixture) } throws: { ($0 as? ModelError)?.reason.contains("mixture of experts") == true }
        #expect { try ActivationPatch(.feedForwardPreActivation, block: expert, source: [], width: 0, positions: []).check(mixture) } throws: { $0 is ModelError }
    }

    @Test("a layer sharing an earlier layer's cache attends over its own window: each row a distribution over at most 8 positions")
    func sharedSlidingLayerAttention() async throws {
        let model = try LanguageModel(path: try TestData.syntheticModel("gemma4"))
        let session = ModelSession(model: model, threads: 1, batchSize: 8)
        let tokens = session.tokenize("A sliding layer that borrows its keys still looks back only eight tokens, no further than that.")
        #expect(tokens.count > 16)
        let pattern = try await session.attentionPattern(tokens, block: 4)
        for head in pattern.weights {
            for (query, row) in head.enumerated() {
                #expect(abs(row.reduce(0, +) - 1) < 1e-4)
                #expect(row.enumerated().allSatisfy { key, weight in key > query || query - key < 8 || weight == 0 }, "query \(query)")
            }
        }
    }
}
