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

    @Test("a model loaded with lora: gives llama.cpp's greedy tokens with that adapter, and its card names the adapter")
    func greedyTokens() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.adapter), "run make adapters to write \(Self.adapter)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.reference)) as? [String: Any])
        let entry = try #require((root["cases"] as? [[String: Any]])?.first)
        let (prompt, expected) = (try #require(entry["prompt"] as? String), try #require(entry["greedy_ids"] as? [Int]))
        // The first seven steps' top two differ by 0.17 or more in llama.cpp's logits; the eighth by 0.09.
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        try await runCell("let m = load(\"\(model)\", lora: [\"\(Self.adapter)\": 1.0])", on: interpreter)
        let ids = try await cellValue("m.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter)
        #expect(ids == "\(Array(expected.prefix(7)))")
        #expect(try await cellValue("m", interpreter).contains("smollm2-r16.gguf × 1.0"))
        // The same model without the adapter writes other tokens.
        try await runCell("let plain = load(\"\(model)\")", on: interpreter)
        let plainIDs = try await cellValue("plain.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter)
        #expect(plainIDs != ids)
        // lora: on one generation: the adapter for it alone, or none ([:]), the model's others unchanged.
        #expect(try await cellValue("plain.generate(\"\(prompt)\", maxTokens: 7, temperature: 0, lora: [\"\(Self.adapter)\": 1.0]).tokens.map { $0[\"id\"] }", interpreter) == ids)
        #expect(try await cellValue("m.generate(\"\(prompt)\", maxTokens: 7, temperature: 0, lora: [:]).tokens.map { $0[\"id\"] }", interpreter) == plainIDs)
        #expect(try await cellValue("m.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter) == ids)
        let stateMessage = await cellFailure("generate(prefill(m, \"\(prompt)\"), \" and\", lora: [:])", interpreter)
        #expect(stateMessage?.contains("cannot change the adapters of a state") == true, "\(stateMessage ?? "no error")")
        // with(lora:): the same weights under other adapters, or none.
        try await runCell("let adapted = plain.with(lora: [\"\(Self.adapter)\": 1.0])", on: interpreter)
        #expect(try await cellValue("adapted.generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter) == ids)
        #expect(try await cellValue("m.with(lora: [:]).generate(\"\(prompt)\", maxTokens: 7, temperature: 0).tokens.map { $0[\"id\"] }", interpreter) == plainIDs)
        // compareModels measures what the adapter changes; against itself, nothing.
        let kl = try await cellValue("compareModels(plain, adapted, \"\(prompt) and then the robot went home.\") * 1", interpreter)
        #expect((Double(kl) ?? 0) > 0.001, "\(kl)")
        #expect(try await cellValue("compareModels(m, adapted, \"\(prompt) and then the robot went home.\") * 1 == 0", interpreter) == "true")
        // adapter(): what the file holds, before it is applied (its rank, 30 blocks' seven
        // projections, their bytes in F32, alpha, architecture and first tensor).
        try await runCell("let a = adapter(\"\(Self.adapter)\")", on: interpreter)
        let bytes: Int = 30 * 16 * 4 * (576 + 576 + 2 * (576 + 192) + 576 + 576 + 3 * (576 + 1536))
        #expect(try await cellValue("[a.rank, len(a.tensors), a.bytes, a.alpha]", interpreter) == "[16, 210, \(bytes), 16.0]")
        #expect(try await cellValue("a.architecture == \"llama\" && a.tensors[0] == \"blk.0.attn_k.weight\" && a.path == \"\(Self.adapter)\"", interpreter) == "true")
        // Its card lists each kind of weight once, with the blocks it adapts it in.
        let card = try await cellValue("a", interpreter)
        #expect(card.split(separator: "\n").filter { $0.hasSuffix(" 30") }.count == 7 && card.contains("attn_output.weight"), "\(card)")
        #expect(await cellFailure("adapter(\"\(model)\")", interpreter)?.contains("not a LoRA adapter") == true)
        let message = await cellFailure("m.with(lora: 3)", interpreter)
        #expect(message?.contains("with() expects lora: to be a dictionary of adapter files") == true, "\(message ?? "no error")")
    }

    @Test("a saved state records the adapters it was computed under: read back under them it continues as the original, under others it is refused naming both")
    func savedStates() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.adapter), "run make adapters to write \(Self.adapter)")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-lora-states-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        try await runCell("""
            let m = load("\(model)", lora: ["\(Self.adapter)": 1.0])
            let plain = m.with(lora: [:])
            save(prefill(m, "Once upon a time, there was"), "\(scratch)/adapted.state")
            save(prefill(plain, "Once upon a time, there was"), "\(scratch)/plain.state")
            let t = loadState(m, "\(scratch)/adapted.state")
            """, on: interpreter)
        let continued = "generate(\" a\", maxTokens: 6, temperature: 0).text"
        #expect(try await cellValue("t.\(continued) == prefill(m, \"Once upon a time, there was\").\(continued)", interpreter) == "true")
        #expect(try await cellValue("loadState(plain, \"\(scratch)/plain.state\").\(continued) != t.\(continued)", interpreter) == "true")
        for (code, words) in [("loadState(plain, \"\(scratch)/adapted.state\")", ["computed under LoRA adapters smollm2-r16.gguf × 1.0", "applies no LoRA adapters"]),
                              ("loadState(m.with(lora: [\"\(Self.adapter)\": 0.5]), \"\(scratch)/adapted.state\")", ["× 1.0", "applies LoRA adapters smollm2-r16.gguf × 0.5"]),
                              ("loadState(m, \"\(scratch)/plain.state\")", ["computed under no LoRA adapters", "applies LoRA adapters smollm2-r16.gguf × 1.0"])] {
            let message = await cellFailure(code, interpreter)
            #expect(message.map { text in words.allSatisfy(text.contains) } == true, "\(code): \(message ?? "no error")")
        }
    }

    @Test("lora: that is not a dictionary of adapter files to finite scales, or names a file that is not an adapter, is refused naming it")
    func refused() async throws {
        let interpreter = modelInterpreter()
        let model = try SteeringCellTests.model("SmolLM2-135M-Instruct.Q4_1.gguf")
        for (code, words) in [("lora: 3", ["dictionary of adapter files", "Int"]), ("lora: [\"a.gguf\": \"x\"]", ["finite scales", "\"x\""]),
                              ("lora: [\"/nonexistent/a.gguf\": 1]", ["/nonexistent/a.gguf"]), ("lora: [\"\(model)\": 1]", ["general.type", "not a LoRA adapter"])] {
            let message = await cellFailure("load(\"\(model)\", \(code))", interpreter)
            #expect(message.map { text in words.allSatisfy(text.contains) } == true, "\(code): \(message ?? "no error")")
        }
    }
}
