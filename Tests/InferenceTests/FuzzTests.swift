import Foundation
import FuzzSupport
import GGUF
import Testing
import Tokenizers
@testable import Inference

@Suite("Fuzzing the GGUF reader and the tokenizers")
struct FuzzTests {
    @Test("600 GGUF files with a mutated header load or fail with a ModelError, never a crash", .timeLimit(.minutes(10)))
    func mutatedGGUFHeaders() throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: try TestData.path("models/stories260K.gguf"))))
        // The metadata and tensor directory: where the reader trusts counts, lengths and offsets.
        let headerEnd = 40_000
        var mutator = SeededMutator(seeds: [Array(bytes.prefix(headerEnd))], dictionary: ["GGUF", "general.architecture", "llama", "\u{FF}\u{FF}\u{FF}\u{7F}"])
        var loaded = 0
        var refused = 0
        for _ in 0..<600 {
            do {
                _ = try loadMutated(mutator.nextInput() + bytes[headerEnd...], name: "fuzz")
                loaded += 1
            } catch {
                refused += 1
            }
        }
        #expect(refused > 0 && loaded + refused == 600)
    }

    @Test("mutated text through the BPE tokenizers (Llama 3, GPT-2, Qwen 2) never crashes, and valid UTF-8 round-trips byte for byte", .timeLimit(.minutes(10)))
    func mutatedTextThroughBPE() throws {
        let seeds = [
            "Hello world! It's 2026-11-23, and I'd've paid $1,234.56.", "   leading\tand\r\ntrailing   ", "ünïcödé 😀👍🏽 中文字符 العربية",
            "<|begin_of_text|>special<|eot_id|>", "numbers 1234567890 and 3.14159", "a\u{0000}b\u{FEFF}c", "don't WON'T y'all",
        ].map { Array($0.utf8) }
        for file in ["ggml-vocab-llama-bpe.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf"] {
            let tokenizer = try Tokenizer(gguf: GGUFFile(path: try TestData.path("models/vocab/" + file)))
            var mutator = SeededMutator(seeds: seeds, dictionary: ["'s", "'ll", "\u{1F600}", "\n\n", "  ", "0123"])
            for _ in 0..<2_000 {
                let input = mutator.nextInput()
                let ids = tokenizer.encode(bytes: input, addSpecial: false, parseSpecial: false)
                // Byte-level BPE loses nothing of valid UTF-8: the pieces spell the input again.
                guard String(validating: input, as: UTF8.self) != nil else { continue }
                let spelled = ids.flatMap { tokenizer.piece($0, showSpecial: true) }
                #expect(spelled == input, "\(file): \(input)")
            }
        }
    }
}
