import Foundation
import GGUF
import GenerationTypes
import Jinja
import Testing
import Tokenizers
@testable import ChatTemplates

/// Lumen's built-in chat formats against what llama.cpp's `llama_chat_apply_template` renders for
/// the same names (`Tests/reference/builtin-chat-templates.json`, made by
/// scripts/make_chat_template_references.py), and which format a file without a template gets.
@Suite("Built-in chat formats")
struct BuiltinChatTemplateTests {
    static func reference() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/builtin-chat-templates.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("every built-in format renders every conversation byte for byte as llama.cpp's format of that name")
    func formatsMatchLlamaCpp() throws {
        let formats = try #require(try Self.reference()["formats"] as? [String: [[String: Any]]])
        #expect(Set(formats.keys) == Set(BuiltinChatTemplate.all.map(\.name)))
        for (name, cases) in formats {
            let builtin = try #require(BuiltinChatTemplate.named(name))
            let template = try ChatTemplate(source: builtin.source, origin: .builtin(name), bosToken: "<s>", eosToken: "</s>")
            for entry in cases {
                let messages = try #require(entry["messages"] as? [[String: String]]).map { ChatMessage(role: $0["role"] ?? "", content: $0["content"] ?? "") }
                let addGenerationPrompt = entry["add_generation_prompt"] as? Bool ?? false
                let rendered = try template.render(messages, addGenerationPrompt: addGenerationPrompt)
                #expect(Array(rendered.utf8) == Array((entry["output"] as? String ?? "").utf8), "\(name), \(messages.map(\.role)), generation prompt \(addGenerationPrompt)")
            }
        }
    }

    @Test("a file without a template gets its architecture's format when its vocabulary has the turn tokens, else ChatML")
    func choice() throws {
        func chosen(_ vocabularyFile: String) throws -> String {
            let gguf = try GGUFFile(path: try TestData.path("models/vocab/" + vocabularyFile))
            return BuiltinChatTemplate.chosen(for: gguf, vocabulary: try Vocabulary(gguf: gguf)).name
        }
        #expect(try chosen("ggml-vocab-llama-bpe.gguf") == "llama3")
        #expect(try chosen("ggml-vocab-phi-3.gguf") == "phi3")
        #expect(try chosen("ggml-vocab-qwen2.gguf") == "chatml")
        // A llama file without Llama 3's header tokens (DeepSeek's vocabulary) is not rendered as Llama 3.
        #expect(try chosen("ggml-vocab-deepseek-llm.gguf") == "chatml")
        #expect(BuiltinChatTemplate.chosen(architecture: "gemma3") { _ in true }.name == "gemma")
        #expect(BuiltinChatTemplate.chosen(architecture: "gemma3") { !$0.contains("turn") }.name == "chatml")
        let gemma = try GGUFFile(path: try TestData.realModel("gemma-3-270m-q4_k_m.gguf"))
        #expect(gemma.metadata["tokenizer.chat_template"] == nil)
        let template = try ChatTemplate(gguf: gemma, vocabulary: try Vocabulary(gguf: gemma))
        #expect(template.origin == .builtin("gemma"))
    }
}
