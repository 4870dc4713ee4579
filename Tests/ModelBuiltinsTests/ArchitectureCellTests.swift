import Evaluation
import Foundation
import LanguageTestSupport
import Testing
@testable import LumenLanguage

/// The synthetic models of the newer architectures (`make synthetic-models`) used as a user uses
/// a model in cells, with llama.cpp's greedy ids (`Tests/reference/synthetic/`) as the oracle.
@Suite("Newer architectures in cells")
struct ArchitectureCellTests {
    /// The path of synthetic model `name` and its llama.cpp reference's first case.
    static func model(_ name: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> (path: String, prompt: String, greedy: [Int]) {
        let folder = ProcessInfo.processInfo.environment["LUMEN_SYNTHETIC_MODELS"] ?? ".build/synthetic-models"
        let path = URL(fileURLWithPath: folder).appendingPathComponent("\(name).gguf").path
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make synthetic-models`", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/synthetic/\(name).json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: reference)) as? [String: Any])
        let first = try #require((root["cases"] as? [[String: Any]])?.first)
        return (path, try #require(first["prompt"] as? String), try #require(first["greedy_ids"] as? [Int]))
    }

    @Test("mixtures of experts (gpt-oss's in MXFP4), a model with a layer without RoPE, hybrid recurrent models (Gated DeltaNet, short convolutions) and Gemma 4 (dense and MoE): load, generate as llama.cpp does, nextTokens, perplexity, a conversation with the model's template",
          arguments: ["qwen3moe", "smollm3", "qwen35", "qwen35moe", "gptoss", "lfm2moe", "gemma4", "gemma4moe"])
    func endToEnd(name: String) async throws {
        let (path, prompt, greedy) = try Self.model(name)
        let interpreter = modelInterpreter()
        try await runCell("let m = load(\"\(path)\")", on: interpreter)
        let literal = prompt.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        try await runCell("let g = generate(m, \"\(literal)\", maxTokens: 8, temperature: 0)", on: interpreter)
        #expect(try await cellValue("g.tokens.map { $0[\"id\"] }", interpreter) == "\(Array(greedy.prefix(8)))")
        // The table's first row (after its header and rule) is the most likely token: llama.cpp's first greedy id.
        let table = try await cellValue("nextTokens(m, \"\(literal)\", k: 3)", interpreter).split(separator: "\n")
        #expect(table.count == 5 && table[2].hasPrefix("\(greedy[0]) "), "\(table)")
        let perplexity = try #require(Double(await cellValue("perplexity(m, \"\(literal)\").value", interpreter)))
        #expect(perplexity.isFinite && perplexity > 1)
        try await runCell("let chat = conversation(m)\nlet reply = chat.say(\"Name a river.\", maxTokens: 4, temperature: 0)", on: interpreter)
        #expect(try await cellValue("chat.prompt", interpreter).contains("Name a river."))
        #expect(try await cellValue("reply.tokens.count", interpreter) == "4")
    }

    @Test("a prompt of token ids in cells (llama.cpp's gpt-oss test model, which has no text vocabulary): generate and nextTokens as llama.cpp, refusals naming the problem")
    func tokenIDPrompts() async throws {
        let folder = ProcessInfo.processInfo.environment["LUMEN_ARCH_MODELS"] ?? ".build/arch-models"
        let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/archs/gpt-oss.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: reference)) as? [String: Any])
        let path = URL(fileURLWithPath: folder).appendingPathComponent(try #require(root["model"] as? String)).path
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing: run `make arch-models`")
            return
        }
        let first = try #require((root["cases"] as? [[String: Any]])?.first)
        let (ids, greedy) = (try #require(first["prompt_ids"] as? [Int]), try #require(first["greedy_ids"] as? [Int]))
        let interpreter = modelInterpreter()
        try await runCell("let m = load(\"\(path)\")\nlet ids = \(ids)", on: interpreter)
        try await runCell("let g = generate(m, ids, maxTokens: 6, temperature: 0)", on: interpreter)
        #expect(try await cellValue("g.tokens.map { $0[\"id\"] }", interpreter) == "\(Array(greedy.prefix(6)))")
        let table = try await cellValue("nextTokens(m, ids, k: 3)", interpreter).split(separator: "\n")
        #expect(table.count == 5 && table[2].hasPrefix("\(greedy[0]) "), "\(table)")
        for (cell, complaint) in [("generate(m, [1, 128])", "generate(): 128 is not a token id (the vocabulary has 128)"),
                                  ("nextTokens(m, [])", "nextTokens() needs at least one token id in the prompt"),
                                  ("generate(m, [1, \"a\"])", "generate() needs Int token ids, got"),
                                  ("generate(m, ids, n: 2)", "a prompt of token ids cannot be combined with n: samples")] {
            await #expect("\(cell)") { try await runCell(cell, on: interpreter) } throws: { error in
                (error as? ExecutionError)?.message.contains(complaint) == true
            }
        }
    }
}
