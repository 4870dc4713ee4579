import Foundation
import GGUF
import Testing
import Tokenizers
@testable import Inference

@Suite("Tokenizer against llama.cpp")
struct TokenizerTests {
    static let vocabularies = [("stories260K", "models/stories260K.gguf"), ("llama2-32000", "models/llama2-vocab.gguf")]

    @Test("every LLaMA-2 tokenizer case, every field, compared as bytes", arguments: vocabularies)
    func referenceCases(vocabulary: String, file: String) throws {
        let tokenizer = try Tokenizer(gguf: GGUFFile(path: try TestData.path(file)))
        let reference = try #require(try TestData.json("tokenizer-cases.json") as? [String: Any])
        let cases = try #require(reference["cases"] as? [[String: Any]])
        #expect(cases.count == 31)
        for testCase in cases {
            let name = testCase["name"] as? String ?? "?"
            let text = try #require(testCase["text"] as? String)
            let expected = try #require(testCase[vocabulary] as? [String: Any])
            func ids(_ key: String) -> [Int32] { (expected[key] as? [Int] ?? []).map { Int32($0) } }
            func expectedBytes(_ key: String) -> [UInt8] {
                if let hex = expected[key + "_utf8_hex"] as? String { return bytes(hex: hex) }
                return Array((expected[key] as? String ?? "").utf8)
            }
            #expect(tokenizer.encode(text) == ids("ids"), "\(name): ids")
            #expect(tokenizer.encode(text, parseSpecial: false) == ids("ids_no_parse_special"), "\(name): ids_no_parse_special")
            #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: false) == ids("ids_no_bos"), "\(name): ids_no_bos")
            #expect(tokenizer.decodeBytes(ids("ids")) == expectedBytes("detok"), "\(name): detok")
            #expect(tokenizer.decodeBytes(ids("ids"), removeSpecial: true) == expectedBytes("detok_remove_special"), "\(name): detok_remove_special")
            #expect(tokenizer.decodeBytes(ids("ids_no_bos")) == expectedBytes("detok_no_bos"), "\(name): detok_no_bos")
        }
    }

    /// The reference file of each vocabulary in `reference/tokenizer/`, and where its GGUF is.
    static let modernVocabularies: [(reference: String, file: String, inCache: Bool)] = [
        ("llama-bpe", "models/vocab/ggml-vocab-llama-bpe.gguf", false),
        ("qwen2", "models/vocab/ggml-vocab-qwen2.gguf", false),
        ("gpt-2", "models/vocab/ggml-vocab-gpt-2.gguf", false),
        ("deepseek-llm", "models/vocab/ggml-vocab-deepseek-llm.gguf", false),
        ("phi-3", "models/vocab/ggml-vocab-phi-3.gguf", false),
        ("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", true),
        ("gemma3", "gemma-3-270m-q4_k_m.gguf", true),
    ]

    @Test("every case of every vocabulary: ids, plain ids, detokenized with and without special tokens",
          arguments: modernVocabularies)
    func modernReferenceCases(vocabulary: (reference: String, file: String, inCache: Bool)) throws {
        let path = vocabulary.inCache ? try TestData.realModel(vocabulary.file) : try TestData.path(vocabulary.file)
        let tokenizer = try Tokenizer(gguf: GGUFFile(path: path))
        let reference = try #require(try TestData.json("tokenizer/\(vocabulary.reference).json") as? [String: Any])
        let cases = try #require(reference["cases"] as? [[String: Any]])
        #expect(cases.count > 40)
        var failures = 0
        for (index, testCase) in cases.enumerated() {
            let text = try #require(testCase["text"] as? String)
            func ids(_ key: String) -> [Int32] { (testCase[key] as? [Int] ?? []).map { Int32($0) } }
            func expected(_ key: String) -> [UInt8] { Array((testCase[key] as? String ?? "").utf8) }
            let label = "\(vocabulary.reference) case \(index) \(String(reflecting: text).prefix(60))"
            let checks = [
                tokenizer.encode(text) == ids("ids"),
                tokenizer.encode(text, addSpecial: false, parseSpecial: false) == ids("ids_plain"),
                tokenizer.decodeBytes(ids("ids"), showSpecial: true) == expected("detok"),
                tokenizer.decodeBytes(ids("ids_plain")) == expected("detok_plain"),
            ]
            #expect(tokenizer.encode(text) == ids("ids"), "\(label): ids")
            #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: false) == ids("ids_plain"), "\(label): ids_plain")
            #expect(tokenizer.decodeBytes(ids("ids"), showSpecial: true) == expected("detok"), "\(label): detok")
            #expect(tokenizer.decodeBytes(ids("ids_plain")) == expected("detok_plain"), "\(label): detok_plain")
            if checks.contains(false) { failures += 1 }
        }
        #expect(failures == 0)
    }

    /// llama.cpp's own tokenizer cases (`test-tokenizer-0`): `ggml-vocab-NAME.gguf.inp` holds the
    /// texts, separated by `__ggml_vocab_test__` lines, and `.out` a line of ids for each, as
    /// llama.cpp tokenizes them without special tokens.
    @Test("llama.cpp's own test-tokenizer-0 cases, token for token", arguments: ["qwen35", "gemma-4"])
    func llamaCppCases(name: String) throws {
        let path = try TestData.path("models/vocab/ggml-vocab-\(name).gguf")
        let tokenizer = try Tokenizer(gguf: GGUFFile(path: path))
        // Read as test-tokenizer-0 reads them: a separator or newline at the very end starts nothing.
        let separator = "\n__ggml_vocab_test__\n"
        let raw = try String(contentsOfFile: path + ".inp", encoding: .utf8)
        let inputs = raw.components(separatedBy: separator).dropLast(raw.hasSuffix(separator) ? 1 : 0)
        let lines = try String(contentsOfFile: path + ".out", encoding: .utf8)
        let outputs = lines.split(separator: "\n", omittingEmptySubsequences: false).dropLast(lines.hasSuffix("\n") ? 1 : 0)
        #expect(inputs.count == outputs.count && inputs.count > 30)
        var failures = 0
        for (text, line) in zip(inputs, outputs) {
            let expected = line.split(separator: " ").compactMap { Int32($0) }
            let ids = tokenizer.encode(text, addSpecial: false, parseSpecial: false)
            #expect(ids == expected, "\(name): \(String(reflecting: text).prefix(80))")
            if ids != expected { failures += 1 }
        }
        // Cases the files leave out (scripts/make_tokenizer_references.py), when there are some.
        let extra = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/tokenizer/\(name).json")
        guard let data = try? Data(contentsOf: extra) else {
            #expect(failures == 0)
            return
        }
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for entry in try #require(root["cases"] as? [[String: Any]]) {
            let text = try #require(entry["text"] as? String)
            #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: false) == (entry["ids"] as? [Int] ?? []).map(Int32.init),
                    "\(name): \(String(reflecting: text))")
        }
        #expect(failures == 0)
    }

    @Test("GPT-4o's pre-tokenizer (gpt-oss's) splits at letter case, three digits and punctuation as llama.cpp does")
    func gpt4oCases() throws {
        // Llama 3's vocabulary with the gpt-4o pre-tokenizer (scripts/make_synthetic_models.py); the
        // ids are llama.cpp's (scripts/make_tokenizer_references.py).
        let tokenizer = try Tokenizer(gguf: GGUFFile(path: try TestData.syntheticModel("gpt-4o-vocab")))
        let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/tokenizer/gpt-4o.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: reference)) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        #expect(cases.count >= 10)
        for entry in cases {
            let text = try #require(entry["text"] as? String)
            #expect(tokenizer.encode(text, addSpecial: false, parseSpecial: false) == (entry["ids"] as? [Int] ?? []).map(Int32.init),
                    "gpt-4o: \(String(reflecting: text))")
        }
    }

    @Test("an unknown pre-tokenizer is refused by name, not replaced by a fallback")
    func unknownPreTokenizer() throws {
        #expect(PreTokenizer.named("qwen2") != nil)
        #expect(PreTokenizer.named("no-such-pre") == nil)
    }

    @Test("end-of-generation tokens come from the vocabulary as llama.cpp derives them")
    func endOfGeneration() throws {
        let qwen = try Tokenizer(gguf: GGUFFile(path: try TestData.path("models/vocab/ggml-vocab-qwen2.gguf")))
        let imEnd = try #require(qwen.encode("<|im_end|>", addSpecial: false).first)
        let endOfText = try #require(qwen.encode("<|endoftext|>", addSpecial: false).first)
        #expect(qwen.isEndOfGeneration(imEnd) && qwen.isEndOfGeneration(endOfText))
        #expect(!qwen.isEndOfGeneration(try #require(qwen.encode("<|im_start|>", addSpecial: false).first)))
        // Hidden unless asked for, and never part of plain text.
        #expect(qwen.piece(imEnd).isEmpty && qwen.piece(imEnd, showSpecial: true) == Array("<|im_end|>".utf8))
        #expect(qwen.encode("<|im_end|>", addSpecial: false, parseSpecial: false).count > 1)
    }
}
