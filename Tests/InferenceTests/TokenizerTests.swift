import Foundation
import Testing
@testable import Inference

@Suite("Tokenizer against llama.cpp")
struct TokenizerTests {
    static let vocabularies = [("stories260K", "models/stories260K.gguf"), ("llama2-32000", "models/llama2-vocab.gguf")]

    @Test("every tokenizer case, every field, compared as bytes", arguments: vocabularies)
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

    @Test("a tokenizer other than llama is refused by name")
    func otherTokenizer() throws {
        let gguf = try GGUFFile(path: try TestData.path("models/stories260K.gguf"))
        #expect(throws: ModelError.self) { try Tokenizer(pieces: [], scores: [], kinds: [], bos: 1, eos: 2) }
        #expect(gguf.metadata["tokenizer.ggml.model"] == .string("llama"))
    }
}
