import ChatTemplates
import Evaluation
import GenerationTypes
import LanguageTestSupport
import Foundation
import Inference
import Synchronization
import Testing
import LumenLanguage
@testable import ModelBuiltins

@Suite("Conversations in cells")
struct ConversationCellTests {
    /// A template that needs no special tokens, so the 512-token toy model can hold a conversation.
    static let template = "{% for m in messages %}{{ m.role | upper }}: {{ m.content }}\\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"

    /// The reference for a second turn "Then what?" after `firstReply`: the whole prompt, written
    /// out by hand, into a brand-new session with no cache to reuse; its greedy ids and how many
    /// prompt tokens it reused.
    static func freshSecondTurn(after firstReply: String, models: String) async throws -> (ids: [Int32], reused: Int) {
        let model = try LanguageModel(path: models + "/stories260K.gguf")
        let prompt = "SYSTEM: Tell a story.\nUSER: Once upon a time\nASSISTANT: \(firstReply)\nUSER: Then what?\nASSISTANT:"
        var ids: [Int32] = []
        var reused = -1
        for try await event in ModelSession(model: model, threads: 1).generate(tokens: model.tokenizer.encode(prompt), options: GenerationOptions(sampling: .greedy, maxTokens: 16)) {
            switch event {
            case .token(let token): ids.append(token.id)
            case .finished(let summary): reused = summary.reusedPromptTokens
            }
        }
        return (ids, reused)
    }

    @Test("a second turn reuses the cached first turn and replies exactly as a fresh session given the whole prompt")
    func turnsReuseTheCache() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf")
            let chat = conversation(m, system: "Tell a story.", template: "\(Self.template)")
            let first = chat.say("Once upon a time", maxTokens: 16, temperature: 0)
            let second = chat.say("Then what?", maxTokens: 16, temperature: 0)
            """, on: interpreter)
        let firstPrompt = Int(try await cellValue("first.stats[\"promptTokens\"]", interpreter)) ?? 0
        let firstGenerated = Int(try await cellValue("first.stats[\"generatedTokens\"]", interpreter)) ?? 0
        let secondPrompt = Int(try await cellValue("second.stats[\"promptTokens\"]", interpreter)) ?? 0
        #expect(firstPrompt > 0 && secondPrompt > firstPrompt + firstGenerated)
        #expect(try await cellValue("chat.messages.count", interpreter) == "5")

        let (freshIDs, reused) = try await Self.freshSecondTurn(after: try await cellValue("first.text", interpreter), models: models)
        #expect(reused == 0)
        let secondIDs = try await cellValue("second.tokens.map { $0[\"id\"] }", interpreter)
        #expect(secondIDs == "[" + freshIDs.map(String.init).joined(separator: ", ") + "]")
        let secondReused = Int(try await cellValue("second.stats[\"reusedPromptTokens\"]", interpreter)) ?? 0
        #expect(secondReused > firstPrompt / 2 && secondReused < secondPrompt)
    }

    @Test("a fork on a session of its own starts from its parent's cache: its first turn reuses the earlier turns and replies as a fresh session would")
    func forkReusesTheParentsCache() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        // Two sessions: the conversation takes the first, its fork the second, whose cache is empty.
        try await runCell("""
            let m = load("\(models)/stories260K.gguf", instances: 2)
            let chat = conversation(m, system: "Tell a story.", template: "\(Self.template)")
            let first = chat.say("Once upon a time", maxTokens: 16, temperature: 0)
            let other = chat.fork()
            let branch = other.say("Then what?", maxTokens: 16, temperature: 0)
            """, on: interpreter)
        let firstPrompt = Int(try await cellValue("first.stats[\"promptTokens\"]", interpreter)) ?? 0
        let branchPrompt = Int(try await cellValue("branch.stats[\"promptTokens\"]", interpreter)) ?? 0
        let branchReused = Int(try await cellValue("branch.stats[\"reusedPromptTokens\"]", interpreter)) ?? 0
        // At least the whole first prompt comes from the parent's cache (the reply, written back
        // into the template, may tokenize differently from how it was generated).
        #expect(branchReused >= firstPrompt && branchReused < branchPrompt, "\(branchReused) of \(branchPrompt); first prompt \(firstPrompt)")
        #expect(try await cellValue("[chat.messages.count, other.messages.count]", interpreter) == "[3, 5]")

        let (freshIDs, _) = try await Self.freshSecondTurn(after: try await cellValue("first.text", interpreter), models: models)
        #expect(try await cellValue("branch.tokens.map { $0[\"id\"] }", interpreter) == "[" + freshIDs.map(String.init).joined(separator: ", ") + "]")
    }

    @Test("two conversations on a model of two sessions keep a session each: a turn of one does not evict the other's")
    func conversationsKeepTheirSessions() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf", instances: 2)
            let one = conversation(m, system: "Tell a story.", template: "\(Self.template)")
            let two = conversation(m, system: "Tell another story.", template: "\(Self.template)")
            let first = one.say("Once upon a time", maxTokens: 8, temperature: 0)
            let other = two.say("The dog ran", maxTokens: 8, temperature: 0)
            let again = one.say("Then what?", maxTokens: 8, temperature: 0)
            """, on: interpreter)
        let firstPrompt = Int(try await cellValue("first.stats[\"promptTokens\"]", interpreter)) ?? 0
        let reused = Int(try await cellValue("again.stats[\"reusedPromptTokens\"]", interpreter)) ?? 0
        #expect(firstPrompt > 0 && reused >= firstPrompt, "\(reused) reused; first prompt \(firstPrompt)")
    }

    @Test("an interrupted reply is kept, marked partial, and the conversation goes on after it")
    func interruptedReply() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf", contextLength: 2048)
            let chat = conversation(m, template: "\(Self.template)")
            """, on: interpreter)
        // The reply's first streamed text cancels the cell from within the sink, while the reply
        // is still being made, however loaded the machine; the cell starts once its task is known.
        let cellTask = TaskSlot()
        let sink = RecordingSink { stream, _ in
            if stream == .stdout { cellTask.task.withLock { $0?.cancel() } }
        }
        let (start, started) = AsyncStream.makeStream(of: Void.self)
        let cell = Task {
            for await _ in start {}
            _ = try await interpreter.execute(ExecutionRequest(code: "chat.say(\"Once upon a time\", maxTokens: 1500, temperature: 0.8, seed: 1)", executionCount: 2), output: sink)
        }
        cellTask.task.withLock { $0 = cell }
        started.finish()
        await #expect(throws: ExecutionError.interrupted) { try await cell.value }
        #expect(try await cellValue("chat.messages.count", interpreter) == "2")
        #expect(try await cellValue("chat.messages[1][\"partial\"]", interpreter) == "true")
        #expect(try await cellValue("chat.messages[1][\"content\"].count > 0", interpreter) == "true")
        try await runCell("chat.say(\"Go on\", maxTokens: 4, temperature: 0)", on: interpreter)
        #expect(try await cellValue("chat.messages.count", interpreter) == "4")
    }

    @Test("a Gemma conversation from a file without a template: Gemma's turns as llama.cpp renders them, the same prompt tokens, and llama.cpp's greedy reply where its choice is clear")
    func gemmaConversation() async throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/builtin-chat-templates.json")
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let gemma = try #require(reference["gemma"] as? [String: Any])
        let cache = ProcessInfo.processInfo.environment["LUMEN_MODEL_CACHE"] ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/lumen/models"
        let path = cache + "/gemma-3-270m-q4_k_m.gguf"
        try #require(FileManager.default.fileExists(atPath: path), "run make models to fetch Gemma-3-270M")
        let question = try #require((gemma["messages"] as? [[String: String]])?.first?["content"])

        // The prompt: llama.cpp's gemma format, tokenized as llama.cpp tokenizes it.
        let model = try LanguageModel(path: path)
        var conversation = try Conversation(gguf: model.gguf, vocabulary: model.tokenizer.vocabulary)
        conversation.append(ChatMessage(role: "user", content: question))
        let prompt = try conversation.renderedPrompt()
        #expect(prompt == gemma["prompt"] as? String)
        #expect(conversation.promptTokens(model.tokenizer, text: prompt).map(Int.init) == gemma["prompt_ids"] as? [Int])

        // The conversation in a cell: the note names the format, the reply follows llama.cpp's
        // greedy tokens up to the first step where its top two logits are within 0.5.
        let interpreter = modelInterpreter()
        let sink = RecordingSink()
        try await runCell("""
            let chat = conversation(load("\(path)"))
            let reply = chat.say("\(question)", maxTokens: 16, temperature: 0)
            """, on: interpreter, sink: sink)
        let notes = sink.events.compactMap { if case .stream(.stderr, let text) = $0 { text } else { nil } }.joined()
        #expect(notes.contains("using the built-in gemma format"))
        let steps = try #require(gemma["steps"] as? [[String: Any]])
        let clear = steps.prefix { ($0["margin"] as? Double ?? 0) >= 0.5 }.compactMap { $0["id"] as? Int }
        #expect(clear.count >= 5)
        let ids = try await cellValue("reply.tokens.map { $0[\"id\"] }", interpreter)
        #expect(ids.hasPrefix("[" + clear.map(String.init).joined(separator: ", ")))
        let text = try await cellValue("reply.text", interpreter)
        #expect(!text.contains("<|im_end|>") && !text.contains("<|im_start|>") && !text.contains("<end_of_turn>"))
    }

    /// A small template in the Hermes `<tool_call>` syntax (its source shows `<function-name>`, as
    /// Qwen's and Hermes' do), which lists the tools, and each call and result, briefly.
    static let toolTemplate = "{% if tools %}TOOLS:{% for t in tools %} {{ t.function.name }}{% endfor %} <function-name>\\n{% endif %}"
        + "{% for m in messages %}{{ m.role | upper }}: {{ m.content }}{% for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}</tool_call>{% endfor %}\\n{% endfor %}"
        + "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
    static let weather = #"["name": "get_weather", "description": "The weather", "parameters": ["type": "object", "properties": ["city": ["type": "string", "maxLength": 8]], "required": ["city"]]]"#

    @Test("say with tools and a named toolChoice: the reply's one call, to that function, with arguments its schema allows, joins the conversation; toolResult answers it and say() replies to it")
    func toolCallsInCells() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf")
            let chat = conversation(m, template: "\(Self.toolTemplate)")
            let reply = chat.say("Weather?", tools: [\(Self.weather)], toolChoice: "get_weather", maxTokens: 150, temperature: 0)
            """, on: interpreter)
        #expect(try await cellValue("reply.toolCalls.count", interpreter) == "1")
        #expect(try await cellValue("reply.toolCalls[0][\"name\"]", interpreter) == "\"get_weather\"")
        let city = try await cellValue("reply.toolCalls[0][\"arguments\"][\"city\"]", interpreter)
        #expect(city.hasPrefix("\"") && city.count <= 10, "\(city)")
        #expect(try await cellValue("reply.finishReason", interpreter) == "\"toolCalls\"")
        #expect(try await cellValue("chat.messages.last[\"toolCalls\"][0][\"id\"] == reply.toolCalls[0][\"id\"]", interpreter) == "true")
        try await runCell("toolResult(chat, reply.toolCalls[0], [\"temperature\": 21])", on: interpreter)
        #expect(try await cellValue("chat.messages.last[\"content\"]", interpreter) == #""{\"temperature\":21}""#)
        try await runCell("let after = chat.say(maxTokens: 4, temperature: 0)", on: interpreter)
        #expect(try await cellValue("chat.messages.count", interpreter) == "4")
        #expect(try await cellValue("after.prompt.contains(\"TOOL: {\\\"temperature\\\":21}\")", interpreter) == "true")
    }

    @Test("a tool given a Lumen function is run on each call, its result goes back, and the model replies again, maxToolRounds times at most")
    func toolsRunInALoop() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        let weather = Self.weather.dropLast() + #", "call": { args in cities.append(args["city"]); return "21 degrees" }]"#
        let sink = RecordingSink()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf")
            let chat = conversation(m, template: "\(Self.toolTemplate)")
            var cities = []
            let last = chat.say("Weather?", tools: [\(weather)], toolChoice: "required", maxToolRounds: 2, maxTokens: 150, temperature: 0)
            """, on: interpreter, sink: sink)
        #expect(try await cellValue("cities.count", interpreter) == "2")
        #expect(try await cellValue("chat.messages.map { $0[\"role\"] }", interpreter)
                == #"["user", "assistant", "tool", "assistant", "tool", "assistant"]"#)
        #expect(try await cellValue("chat.messages[2][\"content\"]", interpreter) == "\"21 degrees\"")
        #expect(try await cellValue("last.toolCalls.count > 0", interpreter) == "true", "the third reply's calls are left to the caller")
        #expect(sink.stdout.components(separatedBy: "← get_weather: 21 degrees").count == 3)
    }

    @Test("tools that cannot be used are refused naming the problem")
    func toolRefusals() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("let m = load(\"\(models)/stories260K.gguf\")\nlet plain = conversation(m, template: \"\(Self.template)\")\nlet chat = conversation(m, template: \"\(Self.toolTemplate)\")", on: interpreter)
        for (code, message) in [
            ("plain.say(\"Hi\", tools: [\(Self.weather)], toolChoice: \"required\")", "the chat template describes no tools"),
            ("chat.say(\"Hi\", toolChoice: \"required\")", "toolChoice: needs tools:"),
            ("chat.say(\"Hi\", tools: [\(Self.weather)], toolChoice: \"get_news\")", "toolChoice names the function 'get_news', which tools does not offer"),
            ("chat.say(\"Hi\", tools: [[\"name\": \"a b\"]])", "tools[0].function.name must be 1 to 64 letters"),
            ("chat.say(\"Hi\", tools: [\(Self.weather)], maxToolRounds: 65)", "maxToolRounds must be 0 to 64"),
            ("chat.say()", "say needs a message, unless the last message is a tool's result"),
            ("toolResult(chat, [\"id\": \"call_x\", \"name\": \"f\"], 1)", "the last reply made no call with id call_x"),
        ] {
            await #expect(throws: ExecutionError.self, "\(code)") {
                do {
                    try await runCell(code, on: interpreter)
                } catch let error as ExecutionError {
                    #expect(error.name == "ValueError" && error.message.contains(message), "\(code): \(error.message)")
                    throw error
                }
            }
        }
    }
}

/// A task, known once it is made, that a callback may cancel.
private final class TaskSlot: Sendable {
    let task = Mutex<Task<Void, any Error>?>(nil)
}
