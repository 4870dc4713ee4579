import Foundation
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins

/// `load(…, cacheType:)` in cells: a Q8_0 cache gives llama.cpp's greedy tokens over its own Q8_0
/// cache (`Tests/reference/kv-cache/`, scripts/make_kv_cache_references.py), the card says which
/// cache, `with(lora:)` keeps it, and what does not fit is refused.
@Suite("KV cache types in cells")
struct KVCacheCellTests {
    static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("reference/kv-cache/smollm2-q8_0.json")

    @Test("a model loaded with cacheType: \"q8_0\" gives llama.cpp's greedy tokens over its Q8_0 cache, in half the memory of F16's; what does not fit is refused")
    func q8_0() async throws {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.reference)) as? [String: Any])
        let entry = try #require((root["cases"] as? [[String: Any]])?.first)
        let (prompt, expected) = (try #require(entry["prompt"] as? String), try #require(entry["greedy_ids"] as? [Int]))
        // The first six steps' top two differ by 0.26 or more in llama.cpp's logits; the seventh by 0.01.
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        try await runCell("let m = load(\"\(model)\", cacheType: \"q8_0\", contextLength: 512)", on: interpreter)
        try await runCell("let half = load(\"\(model)\", cacheType: \"f16\", contextLength: 512)", on: interpreter)
        let ids = try await cellValue("m.generate(\"\(prompt)\", maxTokens: 6, temperature: 0).tokens.map { $0[\"id\"] }", interpreter)
        #expect(ids == "\(Array(expected.prefix(6)))")
        #expect(try await cellValue("m.info[\"cacheType\"]", interpreter) == "\"q8_0\"")
        #expect(try await cellValue("m.with(lora: [:]).info[\"cacheType\"]", interpreter) == "\"q8_0\"")
        // 30 layers × keys and values × 3 KV heads of 64 values, per token and sequence: 34 bytes
        // per 32 values against F16's 64.
        let q8 = try #require(Int(try await cellValue("m.info[\"sessionBytes\"]", interpreter)))
        let f16 = try #require(Int(try await cellValue("half.info[\"sessionBytes\"]", interpreter)))
        let sequences = try #require(Int(try await cellValue("m.info[\"parallel\"]", interpreter)))
        #expect(f16 - q8 == 512 * sequences * 30 * 2 * 3 * (128 - 68))
        let unknown = await cellFailure("load(\"\(model)\", cacheType: \"q4\")", interpreter)
        #expect(unknown?.contains("load() expects cacheType: to be one of \"f32\", \"f16\", \"q8_0\", got \"q4\"") == true, "\(unknown ?? "no error")")
        let stories = try sharedModelsDirectory() + "/stories260K.gguf"
        let narrow = await cellFailure("load(\"\(stories)\", cacheType: \"q8_0\")", interpreter)
        #expect(narrow?.contains("a q8_0 KV cache needs heads a multiple of 32 values wide; the model's are 8") == true, "\(narrow ?? "no error")")
    }
}
