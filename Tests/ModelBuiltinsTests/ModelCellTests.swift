import Evaluation
import GGUF
import LanguageTestSupport
import Foundation
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins

/// The shared stories260K model, through `LUMEN_TEST_DATA` (the Makefile sets it to `../shared`).
func sharedModelsDirectory(sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> String {
    guard let root = ProcessInfo.processInfo.environment["LUMEN_TEST_DATA"],
          FileManager.default.fileExists(atPath: root + "/models/stories260K.gguf") else {
        Issue.record("LUMEN_TEST_DATA must name the shared folder with models/stories260K.gguf (make test sets it)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
    return root + "/models"
}

/// An interpreter with the model host's libraries and no run log.
func modelInterpreter() -> Interpreter {
    Interpreter(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
}

/// Runs `code` as a cell on `interpreter`, what it shows going to `sink`; throws its error.
func runCell(_ code: String, on interpreter: Interpreter, sink: RecordingSink = RecordingSink()) async throws {
    try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
}

/// The result `code` gives as a cell on `interpreter` (not what it printed); throws its error.
func cellValue(_ code: String, _ interpreter: Interpreter) async throws -> String {
    let sink = RecordingSink()
    try await runCell(code, on: interpreter, sink: sink)
    return sink.results.last ?? ""
}

/// The message of the error `code` gives as a cell on `interpreter`, or nil when it runs.
func cellFailure(_ code: String, _ interpreter: Interpreter) async -> String? {
    do {
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: RecordingSink())
        return nil
    } catch {
        return error.message
    }
}

@Suite("Models in cells")
struct ModelCellTests {
    func run(_ code: String, on interpreter: Interpreter, sink: RecordingSink = RecordingSink()) async throws {
        try await runCell(code, on: interpreter, sink: sink)
    }

    @Test("a generation shown live is not shown again as the cell's result, but is its value and shows later")
    func generationShownOnce() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\")", on: interpreter)
        let sink = RecordingSink()
        try await run("generate(m, \"Once upon a time\", maxTokens: 8, temperature: 0)", on: interpreter, sink: sink)
        let footer = sink.events.compactMap { if case .display(let bundle, nil) = $0 { bundle.plainText } else { nil } }.last
        #expect(sink.results.isEmpty && !sink.stdout.isEmpty && footer?.hasSuffix("· length]") == true)
        let later = RecordingSink()
        try await run("let g = generate(m, \"Once upon a time\", maxTokens: 8, temperature: 0)\ng.text.count", on: interpreter, sink: later)
        #expect(later.results.count == 1 && later.stdout == sink.stdout)
        let shown = RecordingSink()
        try await run("g", on: interpreter, sink: shown)
        #expect(shown.results.count == 1 && shown.results[0].hasPrefix(sink.stdout) && shown.results[0].hasSuffix("· length]"))
    }

    @Test("a generation's options show the decimals written (topP: 0.95), and still compare equal to them")
    func optionsShowTheDecimalsWritten() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\")", on: interpreter)
        let sink = RecordingSink()
        try await run("let g = generate(m, \"Once\", maxTokens: 2, temperature: 0.7, topP: 0.95, minP: 0.05, seed: 1)\n[g.options[\"topP\"], g.options[\"temperature\"], g.options[\"minP\"]]", on: interpreter, sink: sink)
        #expect(sink.results == ["[0.95, 0.7, 0.05]"])
        let equal = RecordingSink()
        try await run("g.options[\"topP\"] == 0.95", on: interpreter, sink: equal)
        #expect(equal.results == ["true"])
    }

    @Test("greedy generate gives llama.cpp's tokens; the text streams in coalesced pieces, then the summary line")
    func greedyGeneration() async throws {
        let models = try sharedModelsDirectory()
        let data = try Data(contentsOf: URL(fileURLWithPath: models + "/../reference/stories260K.json"))
        let reference = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let cases = reference?["cases"] as? [[String: Any]]
        let expected = try #require(cases?.first?["greedy_ids"] as? [Int])
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\")", on: interpreter)
        let sink = RecordingSink()
        let started = ContinuousClock.now
        try await run("let g = generate(m, \"Once upon a time\", maxTokens: 64, temperature: 0)\ng.tokens.map { $0[\"id\"] }", on: interpreter, sink: sink)
        let elapsed = ContinuousClock.now - started
        #expect(sink.results.last == "[" + expected.map(String.init).joined(separator: ", ") + "]")
        let pieces = sink.events.compactMap { if case .stream(.stdout, let text) = $0 { text } else { nil } }
        // At most one piece per 40 ms, plus the last one and the line break after it.
        #expect(!pieces.isEmpty && pieces.count <= Int(elapsed / .milliseconds(40)) + 3, "\(pieces.count) pieces in \(elapsed)")
        let text = try await interpreterValue("g.text", interpreter)
        #expect(pieces.joined() == text + "\n")
        let footer = sink.events.compactMap { if case .display(let bundle, nil) = $0 { bundle.plainText } else { nil } }.last
        #expect(footer?.hasSuffix("· length]") == true)
    }

    func interpreterValue(_ code: String, _ interpreter: Interpreter) async throws -> String {
        let sink = RecordingSink()
        try await run("print(\(code))", on: interpreter, sink: sink)
        return String(sink.stdout.dropLast())
    }

    @Test("an interrupt during a long generation ends the cell, keeps the partial text, and the next cell works")
    func interruptGeneration() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\", contextLength: 2048)", on: interpreter)
        let (streamed, written) = AsyncStream.makeStream(of: Void.self)
        let sink = RecordingSink { stream, _ in if stream == .stdout { written.yield() } }
        // Generations one after another, so the cell cannot end before the interrupt however
        // late this task sees the first text on a loaded machine.
        let code = "for seed in 1..<1000000 { generate(m, \"Once upon a time\", maxTokens: 2000, temperature: 0.8, seed: seed) }"
        let cell = Task {
            try await interpreter.execute(ExecutionRequest(code: code, executionCount: 2), output: sink)
        }
        for await _ in streamed { break }
        // How fast it ends is measured by `make measure`, not asserted: a test must not race a clock.
        cell.cancel()
        await #expect(throws: ExecutionError.interrupted) { try await cell.value }
        let footer = sink.events.compactMap { if case .display(let bundle, nil) = $0 { bundle.plainText } else { nil } }.last ?? ""
        #expect(footer.hasSuffix("· interrupted]") && sink.stdout.count > 10)
        try await run("generate(m, \"Lily\", maxTokens: 5, temperature: 0)", on: interpreter)
    }

    @Test("quantize returns a loaded model in the new format whose perplexity stays close; a bad format is refused with the choices")
    func quantizeInCells() async throws {
        let models = try sharedModelsDirectory()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-cells-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\")", on: interpreter)
        let sink = RecordingSink()
        try await run("let q = quantize(m, to: \"q8_0\", path: \"\(directory)/q.gguf\")", on: interpreter, sink: sink)
        let progress = sink.events.compactMap { if case .progress(let bundle, _, let finished) = $0 { (bundle.plainText ?? "", finished) } else { nil } }
        #expect(progress.last?.0.hasPrefix("stories260K → Q8_0: 1.19 MB → 0.38 MB") == true && progress.last?.1 == true, "\(progress)")
        #expect(progress.dropLast().allSatisfy { !$0.1 })
        #expect(try await interpreterValue("q.info[\"tensorTypes\"]", interpreter).contains("Q8_0 ×32"))
        #expect(try await interpreterValue("q.path", interpreter) == directory + "/q.gguf")
        let text = "Once upon a time, there was a little girl named Lily. She loved to play outside."
        let original = try #require(Double(try await interpreterValue("perplexity(m, \"\(text)\").value", interpreter)))
        let quantized = try #require(Double(try await interpreterValue("perplexity(q, \"\(text)\").value", interpreter)))
        #expect(abs(quantized - original) / original < 0.05, "\(original) → \(quantized)")
        await #expect {
            try await run("quantize(m, to: \"IQ2_XXS\")", on: interpreter)
        } throws: { error in
            (error as? ExecutionError)?.message.contains("unknown format \"IQ2_XXS\"; choose one of F32, F16, Q8_0") == true
        }
        let written = try Data(contentsOf: URL(fileURLWithPath: directory + "/q.gguf"))
        await #expect {
            try await run("quantize(q, to: \"Q4_0\", path: \"\(directory)/./q.gguf\")", on: interpreter)
        } throws: { error in
            (error as? ExecutionError)?.message.contains("is the model being quantized (the same file)") == true
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/q.gguf")) == written)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["q.gguf"])
    }

    @Test("completion inside load(\" offers each model file of the search path once; a misspelt name gets a did-you-mean")
    func loadCompletion() async throws {
        let models = try sharedModelsDirectory()
        // The same folder twice in the search path still lists each model once.
        setenv("LUMEN_MODEL_PATH", models + ":" + models, 1)
        let completion = await modelInterpreter().complete("let m = load(\"stor", cursor: 18)
        #expect(completion.matches == ["stories260K"])
        #expect((completion.start, completion.end) == (14, 18))
        #expect(await modelInterpreter().complete("let m = load(\"stories260K.g", cursor: 26).matches == ["stories260K.gguf"])
        let session = Session(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
        #expect(await session.run("load(\"storis260\")").hasSuffix("(did you mean 'stories260'?)"))
    }

    @Test("completion after a model's name offers its methods and properties, as `m.info` lists them")
    func memberCompletion() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await run("let m = load(\"\(models)/stories260K.gguf\")", on: interpreter)
        #expect(await interpreter.complete("m.gen", cursor: 5).matches == ["generate"])
        // Every member the evaluator accepts, as its error for an unknown member lists them.
        var listed: [String] = []
        do {
            try await run("m.nothing", on: interpreter)
        } catch {
            listed = (error as? ExecutionError)?.message.components(separatedBy: "it has ").last?.components(separatedBy: ", ") ?? []
        }
        let all = await interpreter.complete("m.", cursor: 2).matches
        #expect(!listed.isEmpty && all == listed)
    }

    @Test("a bad path names the problem; unload makes later use an error; reload brings it back")
    func lifecycle() async throws {
        let models = try sharedModelsDirectory()
        let session = Session(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
        #expect(await session.run("load(\"no-such-model\")").hasPrefix("ModelError: no-such-model: path: no such model file; looked in"))
        _ = await session.run("let m = load(\"\(models)/stories260K.gguf\")")
        #expect(await session.run("m.info[\"vocabulary\"]") == "512")
        _ = await session.run("unload(m)")
        #expect(await session.run("generate(m, \"hi\")").hasSuffix("was unloaded; load it again or call reload()"))
        _ = await session.run("reload(m)")
        #expect(await session.value("m.generate(\"Once\", maxTokens: 3, temperature: 0).tokens.count") == "3")
        #expect(await session.run("detokenize(m, [1, 403, 407])") == "\" Once upon\"")
        // Tokens as data: indexed (negative from the end), sliced, counted, iterated, and by id.
        _ = await session.run("let t = tokenize(m, \"Once upon a time\")")
        #expect(await session.run("[t[0], t[-1], len(t), t.ids.count]") == "[1, 378, 5, 5]")
        #expect(await session.run("t[1...].pieces") == "[\" Once\", \" upon\", \" a\", \" time\"]")
        #expect(await session.run("toText(m, t[1..<3])") == "\"Once upon\"")
        #expect(await session.run("sorted(t)") == "[1, 261, 378, 403, 407]")
        // A SentencePiece vocabulary puts a space before the text itself, as llama.cpp does.
        #expect(await session.run("tokenId(m, \"upon\")") == "407")
        #expect(await session.run("tokenId(m, \"upon a\")").hasPrefix("ValueError: \"upon a\" is 2 tokens (\"·upon\" \"·a\"), not one"))
        #expect(await session.run("perplexity(m, \"Once upon a time\") > 1") == "true")
        #expect(await session.run("perplexity(m, \"Once upon a time\").logprobs.count") == "4")
        #expect(await session.run("bench(m, promptTokens: 8, genTokens: 4, repetitions: 1, threads: [1]).rows.map { $0[\"test\"] }") == "[\"pp8\", \"tg4\"]")
    }
}

extension ModelCellTests {
    @Test("logitBias: bans (false) and favours tokens by id, a presence penalty keeps tokens from repeating, g.options shows them; an id the vocabulary lacks is refused naming it")
    func logitBiasAndPenalties() async throws {
        let models = try sharedModelsDirectory()
        let session = Session(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
        _ = await session.run("let m = load(\"\(models)/stories260K.gguf\")")
        _ = await session.run("let plain = m.generate(\"Once upon a time\", maxTokens: 24, temperature: 0)")
        _ = await session.run("let first = plain.tokens[0][\"id\"]")
        _ = await session.run("let banned = m.generate(\"Once upon a time\", maxTokens: 4, temperature: 0, logitBias: [first: false, 5: 1.5])")
        #expect(await session.value("banned.tokens[0][\"id\"] != first") == "true")
        #expect(await session.value("banned.options[\"logitBias\"] == [first: false, 5: 1.5]") == "true")
        // Favoured far enough, a token is the greedy pick.
        #expect(await session.value("m.generate(\"Once upon a time\", maxTokens: 1, temperature: 0, logitBias: [300: 100]).tokens[0][\"id\"]") == "300")
        // A presence penalty of 100 over a window longer than the text keeps every token from
        // coming twice; greedy, the plain text repeats itself (38 distinct tokens of 48).
        _ = await session.run("let penalized = m.generate(\"Once upon a time\", maxTokens: 48, temperature: 0, frequencyPenalty: 0.5, presencePenalty: 100, repeatLastN: 60)")
        _ = await session.run("let long = m.generate(\"Once upon a time\", maxTokens: 48, temperature: 0)")
        _ = await session.run("var seen = [:]\nfor t in penalized.tokens { seen[t[\"id\"]] = true }\nvar plainSeen = [:]\nfor t in long.tokens { plainSeen[t[\"id\"]] = true }")
        #expect(await session.value("[len(penalized.tokens), len(seen), len(plainSeen) < 48]") == "[48, 48, true]")
        #expect(await session.value("[penalized.options[\"frequencyPenalty\"], penalized.options[\"presencePenalty\"], penalized.options[\"repeatLastN\"]]") == "[0.5, 100.0, 60]")
        #expect(await session.value("plain.options[\"frequencyPenalty\"] == nil") == "true")
        #expect(await session.run("m.generate(\"Once\", maxTokens: 1, logitBias: [512: 1])").contains("logit bias: names token 512, which is not in the vocabulary of 512 (0…511)"))
        #expect(await session.run("m.generate(\"Once\", maxTokens: 1, logitBias: [3: \"high\"])").contains("logitBias: token 3's bias must be a number, or false to ban it"))
    }
}

@Suite("Batches, comparisons and jobs")
struct BatchAndJobTests {
    @Test("batch returns generations in prompt order, matching single greedy runs; compare crosses option lists")
    func batchAndCompare() async throws {
        let models = try sharedModelsDirectory()
        let session = Session(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
        _ = await session.run("let m = load(\"\(models)/stories260K.gguf\", instances: 2)")
        _ = await session.run("%defaults maxTokens=8 temperature=0")
        let single = await session.value("[m.generate(\"Lily\").text, m.generate(\"Once upon a time\").text]")
        #expect(single.hasPrefix("[\"") && single.contains("there was"), "\(single)")
        #expect(await session.run("batch(m, [\"Lily\", \"Once upon a time\"]).map { $0.text }") == single)
        #expect(await session.run("compare(m, \"Once\", temperature: [0.0, 1.0], seed: [1, 2, 3]).count") == "6")
        #expect(await session.run("defaults()[\"maxTokens\"]") == "8")
    }

    @Test("compare shows its table once (the list it returns is not shown again); two models of one name are told apart")
    func compareShowsOnce() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await interpreter.execute(ExecutionRequest(code: "let a = load(\"\(models)/stories260K.gguf\")\nlet b = load(\"\(models)/stories260K.gguf\")", executionCount: 1),
                                      output: RecordingSink())
        let sink = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "compare([a, b], \"Once\", temperature: [0], maxTokens: 3)", executionCount: 2), output: sink)
        #expect(sink.results.isEmpty)
        let tables = sink.events.compactMap { if case .display(let bundle, nil) = $0 { bundle.plainText } else { nil } }
        #expect(tables.count == 1)
        let rows = tables.first?.split(separator: "\n").dropFirst(2).map(String.init) ?? []
        #expect(rows.count == 2 && rows[0].hasPrefix("stories260K (local, 1)") && rows[1].hasPrefix("stories260K (local, 2)"), "\(rows)")
        // As a value in a later cell, or not the cell's last value, the list shows as usual.
        let later = RecordingSink()
        try await interpreter.execute(ExecutionRequest(code: "let c = compare(a, \"Once\", temperature: [0], maxTokens: 2)\nc.count", executionCount: 3), output: later)
        #expect(later.results == ["1"])
    }

    @Test("load shows a progress bar that finishes, not the model: the model shows once, as the cell's value")
    func loadShowsTheModelOnce() async throws {
        let models = try sharedModelsDirectory()
        let sink = RecordingSink()
        try await modelInterpreter().execute(ExecutionRequest(code: "let m = load(\"\(models)/stories260K.gguf\")\nm", executionCount: 1), output: sink)
        let progress = sink.events.compactMap { if case .progress(let bundle, _, let finished) = $0 { (bundle.plainText ?? "", finished) } else { nil } }
        #expect(progress.map(\.1) == [false, true] && progress.last?.0.hasSuffix("100%") == true)
        #expect(sink.results.count == 1 && sink.results[0].contains("stories260K"))
        #expect(!sink.events.contains { if case .display = $0 { true } else if case .update = $0 { true } else { false } })
    }

    @Test("a spawned job runs on after its cell; result waits; cancel stops it; %reset cancels all")
    func jobs() async throws {
        let models = try sharedModelsDirectory()
        let session = Session(libraries: ModelHost.libraries(runLog: nil, frontEnd: "kernel"))
        _ = await session.run("let m = load(\"\(models)/stories260K.gguf\")")
        _ = await session.run("let quick = spawn { m.generate(\"Once\", maxTokens: 5, temperature: 0).tokens.count }")
        #expect(await session.run("quick.result") == "5")
        #expect(await session.run("quick.status") == "\"done\"")
        // Generations without end: the job is running whenever its status is read, however loaded
        // the machine (one generation, however long, ends at its end of text or the context).
        _ = await session.run("let long = spawn(priority: .background) { while true { m.generate(\"Once\", maxTokens: 64, temperature: 0.9) } }")
        #expect(await session.run("long.status") == "\"running\"")
        _ = await session.run("long.cancel()")
        #expect(await session.run("long.result").hasPrefix("Cancelled: job 2 was cancelled"))
        #expect(await session.run("long.status") == "\"cancelled\"")
        _ = await session.run("let other = spawn { sleep(60) }")
        _ = await session.run("%reset -f")
        let last = try #require(await session.interpreter.state.jobs.all.last)
        let outcome = try await last.result()
        #expect(outcome.map { _ in "ok" } == .failure(ExecutionError(name: "Cancelled", message: "job 3 was cancelled", traceback: ["Cancelled: job 3 was cancelled"])))
    }
}
