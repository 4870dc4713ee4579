import Foundation
import LumenKit

// Usage: StreamGeneration MODEL.gguf [PROMPT] — prints the prompt, then 32 greedy tokens as they come.
let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: StreamGeneration MODEL.gguf [PROMPT]\n".utf8))
    exit(2)
}
let container = try await ModelContainer.load(arguments[1])
let prompt = arguments.count > 2 ? arguments[2] : "Once upon a time"
let options = GenerationOptions(sampling: .greedy, maxTokens: 32)
FileHandle.standardOutput.write(Data(prompt.utf8))
for try await event in container.generate(prompt, options: options) {
    switch event {
    case .token(let token):
        FileHandle.standardOutput.write(Data(token.text.utf8))
    case .finished(let summary):
        print("\n[\(summary.generatedTokens) tokens at \(Int(summary.generationTokensPerSecond)) tok/s, \(summary.finishReason)]")
    }
}
