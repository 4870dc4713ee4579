import Evaluation
import LanguageTestSupport
import Foundation
import Inference
import Testing
import LumenLanguage
@testable import LumenModels

@Suite("Conversations in cells")
struct ConversationCellTests {
    /// A template that needs no special tokens, so the 512-token toy model can hold a conversation.
    static let template = "{% for m in messages %}{{ m.role | upper }}: {{ m.content }}\\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"

    func run(_ code: String, on interpreter: Interpreter, sink: RecordingSink = RecordingSink()) async throws {
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
    }

    func value(_ code: String, _ interpreter: Interpreter) async throws -> String {
        let sink = RecordingSink()
        try await run(code, on: interpreter, sink: sink)
        return sink.results.last ?? ""
    }

    @Test("a second turn reuses the cached first turn and replies exactly as a fresh session given the whole prompt")
    func turnsReuseTheCache() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("""
            let m = load("\(models)/stories260K.gguf")
            let chat = conversation(m, system: "Tell a story.", template: "\(Self.template)")
            let first = chat.say("Once upon a time", maxTokens: 16, temperature: 0)
            let second = chat.say("Then what?", maxTokens: 16, temperature: 0)
            """, on: interpreter)
        let firstPrompt = Int(try await value("first.stats[\"promptTokens\"]", interpreter)) ?? 0
        let firstGenerated = Int(try await value("first.stats[\"generatedTokens\"]", interpreter)) ?? 0
        let secondPrompt = Int(try await value("second.stats[\"promptTokens\"]", interpreter)) ?? 0
        #expect(firstPrompt > 0 && secondPrompt > firstPrompt + firstGenerated)
        #expect(try await value("chat.messages.count", interpreter) == "5")

        // The reference: the same prompt, written out by hand, into a brand-new session with no
        // cache to reuse.
        let path = models + "/stories260K.gguf"
        let model = try LanguageModel(path: path)
        let firstReply = try await value("first.text", interpreter)
        let prompt = "SYSTEM: Tell a story.\nUSER: Once upon a time\nASSISTANT: \(firstReply)\nUSER: Then what?\nASSISTANT:"
        let fresh = ModelSession(model: model, threads: 1)
        var freshIDs: [Int32] = []
        var reused = -1
        for try await event in fresh.generate(tokens: model.tokenizer.encode(prompt), options: GenerationOptions(sampling: .greedy, maxTokens: 16)) {
            switch event {
            case .token(let token): freshIDs.append(token.id)
            case .finished(let summary): reused = summary.reusedPromptTokens
            }
        }
        #expect(reused == 0)
        let secondIDs = try await value("second.tokens.map { $0[\"id\"] }", interpreter)
        #expect(secondIDs == "[" + freshIDs.map(String.init).joined(separator: ", ") + "]")
        let secondReused = Int(try await value("second.stats[\"reusedPromptTokens\"]", interpreter)) ?? 0
        #expect(secondReused > firstPrompt / 2 && secondReused < secondPrompt)
    }

    @Test("an interrupted reply is kept, marked partial, and the conversation goes on after it")
    func interruptedReply() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("""
            let m = load("\(models)/stories260K.gguf", contextLength: 2048)
            let chat = conversation(m, template: "\(Self.template)")
            """, on: interpreter)
        let sink = RecordingSink()
        let cell = Task {
            try await interpreter.execute(ExecutionRequest(code: "chat.say(\"Once upon a time\", maxTokens: 1500, temperature: 0.8, seed: 1)", executionCount: 2), output: sink)
        }
        while !sink.events.contains(where: { if case .update = $0 { true } else { false } }) { await Task.yield() }
        cell.cancel()
        await #expect(throws: ExecutionError.interrupted) { try await cell.value }
        #expect(try await value("chat.messages.count", interpreter) == "2")
        #expect(try await value("chat.messages[1][\"partial\"]", interpreter) == "true")
        #expect(try await value("chat.messages[1][\"content\"].count > 0", interpreter) == "true")
        try await run("chat.say(\"Go on\", maxTokens: 4, temperature: 0)", on: interpreter)
        #expect(try await value("chat.messages.count", interpreter) == "4")
    }
}
