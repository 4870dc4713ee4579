import Foundation
import GGUF
import Testing
@testable import Inference

/// Writes `bytes` to a temporary file and parses it as a model.
func loadMutated(_ bytes: [UInt8], name: String = "mutated") throws -> LanguageModel {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-\(name)-\(UUID().uuidString).gguf")
    try Data(bytes).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    return try LanguageModel(path: url.path)
}

/// Replaces the string value of metadata `key` with `value` (of the same length).
func replacingValue(ofKey key: String, with value: String, in bytes: [UInt8]) throws -> [UInt8] {
    let needle = Array(key.utf8)
    let index = try #require((0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
    let valueStart = index + needle.count + 4 + 8
    var result = bytes
    result.replaceSubrange(valueStart..<(valueStart + value.utf8.count), with: Array(value.utf8))
    return result
}

@Suite("GGUF reader")
struct GGUFFileTests {
    func original() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: try TestData.path("models/stories260K.gguf"))))
    }

    @Test("metadata and tensors of a real file")
    func realFile() throws {
        let gguf = try GGUFFile(path: try TestData.path("models/stories260K.gguf"))
        #expect(gguf.version == 3)
        #expect(gguf.metadata["llama.embedding_length"]?.intValue == 64)
        #expect(gguf.metadata["tokenizer.ggml.tokens"]?.arrayValue?.count == 512)
        #expect(gguf.tensors.count == 48)
        #expect(gguf.tensorsByName["blk.0.attn_k.weight"]?.shape == [64, 32])
        let model = try LanguageModel(gguf: gguf)
        #expect(model.configuration.headCountKV == 4 && model.configuration.blockCount == 5)
        #expect(model.parameterCount == gguf.tensors.reduce(0) { $0 + $1.elementCount })
    }

    @Test("errors name the file, the field and the problem")
    func namedErrors() throws {
        let bytes = try original()
        let cases: [([UInt8], String)] = [
            (Array("GGUX".utf8) + bytes.dropFirst(4), "magic"),
            (Array(bytes.prefix(4)) + [9, 0, 0, 0] + bytes.dropFirst(8), "GGUF version 9"),
            (Array(bytes.prefix(1000)), "runs past the end of the file"),
            (try replacingValue(ofKey: "general.architecture", with: "mamba", in: bytes), "architecture \"mamba\" is not supported"),
            (try replacingValue(ofKey: "tokenizer.ggml.model", with: "gpt2x", in: bytes), "tokenizer \"gpt2x\" is not supported"),
        ]
        for (mutated, message) in cases {
            do {
                _ = try loadMutated(mutated)
                Issue.record("accepted a file that should fail with \(message)")
            } catch let error as ModelError {
                #expect(error.file.contains("lumen-mutated"), "\(error)")
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    @Test("truncated and randomly corrupted copies load or fail cleanly, never crash")
    func fuzz() throws {
        let bytes = try original()
        var generator = SystemRandomNumberGenerator()
        var failures = 0
        for cut in stride(from: 0, to: bytes.count, by: 19_937) {
            do { _ = try loadMutated(Array(bytes.prefix(cut))) } catch { failures += 1 }
        }
        let headerEnd = 40_000
        for _ in 0..<150 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                mutated[Int.random(in: 0..<headerEnd, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do { _ = try loadMutated(mutated) } catch { failures += 1 }
        }
        #expect(failures > 50, "the corruptions should mostly be caught")
    }
}
