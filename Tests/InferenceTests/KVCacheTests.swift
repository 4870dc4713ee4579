import Foundation
import Testing
@testable import Inference

/// Quantized KV caches against llama.cpp with the same cache (`Tests/reference/kv-cache/`, made by
/// scripts/make_kv_cache_references.py: `-ctk q8_0 -ctv q8_0`, flash attention on), within the
/// bounds of the real-model tests (`RealModelTests.checkFidelity`).
@Suite("Quantized KV caches")
struct KVCacheTests {
    static let references = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("reference/kv-cache")

    @Test("logits over a Q8_0 cache match llama.cpp's over its Q8_0 cache, within the real-model bounds", arguments: ["smollm2-q8_0", "gemma3-q8_0"])
    func q8_0Fidelity(name: String) throws {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.references.appendingPathComponent("\(name).json"))) as? [String: Any])
        #expect(root["cache_type"] as? String == KVCacheType.q8_0.rawValue)
        let path = try TestData.realModel(try #require(root["model"] as? String))
        #expect(SHA256Hex.of(file: path) == root["model_sha256"] as? String, "\(path) is not the model the references were made from")
        let model = try LanguageModel(path: path)
        try RealModelTests.checkFidelity(model, reference: root, logitsDirectory: Self.references.path, activations: .quantized, cacheType: .q8_0)
    }

    @Test("a Q8_0 cache takes 34 bytes per 32 values, as llama.cpp's; heads not a multiple of 32 wide do not fit it")
    func q8_0Size() throws {
        let smollm2 = try LanguageModel(path: try TestData.realModel("SmolLM2-135M-Instruct.Q4_1.gguf"))
        #expect(smollm2.configuration.fits(.q8_0))
        let session = ModelSession(model: smollm2, contextLength: 64, threads: 1, cacheType: .q8_0)
        let c = smollm2.configuration
        // 30 layers, keys and values, 3 KV heads of 64: what llama.cpp reports as K (q8_0) + V (q8_0).
        #expect(session.bytesPerCachedToken == c.blockCount * 2 * c.headCountKV * c.headDimension / 32 * 34)
        #expect(session.bytesPerCachedToken == 30 * 2 * 3 * 2 * 34)
        let stories = try LanguageModel(path: try TestData.path("models/stories260K.gguf"))
        #expect(stories.configuration.headWidths == [8])
        #expect(!stories.configuration.fits(.q8_0))
        #expect(stories.configuration.fits(.f16))
    }
}
