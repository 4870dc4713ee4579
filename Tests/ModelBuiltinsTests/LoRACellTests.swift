import Evaluation
import Foundation
import LanguageTestSupport
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins

/// `load(…, lora:)` in cells against llama.cpp with the same adapter (`Tests/reference/lora/`,
/// scripts/make_lora_references.py): the greedy tokens of llama.cpp's reference, the card saying
/// which adapters apply, and arguments that are not adapters refused.
@Suite("LoRA adapters in cells")
struct LoRACellTests {
    static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("reference/lora/smollm2-one.json")
    static var adapter: String { (ProcessInfo.processInfo.environment["LUMEN_ADAPTERS"] ?? ".build/adapters") + "/smollm2-r16.gguf" }

    func results(_ code: String, _ interpreter: Interpreter) async throws -> [String] {
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
        return sink.results
    }

    func failure(_ code: String, _ interpreter: Interpreter) async -> String? {
        do {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 2), output: RecordingSink())
            return nil
        } catch {
            return error.message
        }
    }

    @Test("a model loaded with lora: gives llama.cpp's greedy tokens with that adapter, and its card names the adapter")
    func greedyTokens() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.adapter), "run make adapters to write \(Self.adapter)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.reference)) as? [String: Any])
        let entry = try #require((root["cases"] as? [[String: Any]])?.first)
        let (prompt, expected) = (try #require(entry["prompt"] as? String), try #require(entry["greedy_ids"] as? [Int]))
        // The first seven steps' top two differ by 0.17 or more in llama.cpp's logits; the eighth by 0.09.
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        _ = try await results("let m = load(\"\(model)\", lora: [\"\(Self.adapter)\": 1.0])", interpreter)
        let ids = try await results("m.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter)
        #expect(ids == ["\(Array(expected.prefix(7)))"])
        let card = try await results("m", interpreter)
        #expect(card.first?.contains("smollm2-r16.gguf × 1.0") == true)
        // The same model without the adapter writes other tokens.
        _ = try await results("let plain = load(\"\(model)\")", interpreter)
        #expect(try await results("plain.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter) != ids)
    }

    @Test("lora: that is not a dictionary of adapter files to finite scales, or names a file that is not an adapter, is refused naming it")
    func refused() async throws {
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        for (code, words) in [("lora: 3", ["dictionary of adapter files", "Int"]), ("lora: [\"a.gguf\": \"x\"]", ["finite scales", "\"x\""]),
                              ("lora: [\"/nonexistent/a.gguf\": 1]", ["/nonexistent/a.gguf"]), ("lora: [\"\(model)\": 1]", ["general.type", "not a LoRA adapter"])] {
            let message = await failure("load(\"\(model)\", \(code))", interpreter)
            #expect(message.map { text in words.allSatisfy(text.contains) } == true, "\(code): \(message ?? "no error")")
        }
    }
}
