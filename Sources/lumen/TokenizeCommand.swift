import ArgumentParser
import Foundation
import GGUF
import Inference
import Tokenizers

/// `lumen tokenize MODEL TEXT`: the token ids of a text, as llama-tokenize gives them.
struct TokenizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenize",
        abstract: "Print the token ids of a text (BOS added and special tokens parsed, unless --plain).",
        discussion: "Any GGUF file with a vocabulary works, vocabulary-only files included."
    )

    @Argument(help: "A GGUF file with a vocabulary: a path, or a name found as load() finds it.")
    var model: String

    @Argument(help: "The text, or - to read it from stdin as bytes (no newline added or removed).")
    var text: String

    @Flag(help: "Neither add BOS/EOS nor parse special tokens written in the text.")
    var plain = false

    @Flag(help: "Print a JSON array instead of one id per line.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        _ = global.bootstrapLogging(label: "lumen.tokenize")
        let tokenizer = try Tokenizer(gguf: GGUFFile(path: ModelLocator.resolve(model)))
        let bytes = text == "-" ? [UInt8](FileHandle.standardInput.readDataToEndOfFile()) : Array(text.utf8)
        let ids = tokenizer.encode(bytes: bytes, addSpecial: !plain, parseSpecial: !plain)
        let output = json ? "[" + ids.map(String.init).joined(separator: ", ") + "]\n" : ids.map { "\($0)\n" }.joined()
        FileHandle.standardOutput.write(Data(output.utf8))
    }
}
