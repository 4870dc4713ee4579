import Foundation
import Grammars
import LumenKit
import RunLog
import Synchronization
import Testing

/// The façade against llama.cpp's own outputs (../shared/reference, made with llama.cpp's C API:
/// greedy ids and the logits of each step), and its promises about cancellation and recording.
@Suite("ModelContainer")
struct ModelContainerTests {
    /// `LUMEN_TEST_DATA`'s `name`, or a recorded failure saying what to set.
    static func shared(_ name: String) throws -> String {
        guard let root = ProcessInfo.processInfo.environment["LUMEN_TEST_DATA"] else {
            Issue.record("LUMEN_TEST_DATA must name the shared folder with models/ and reference/ (make test sets it to ../shared)")
            throw CancellationError()
        }
        return root + "/" + name
    }

    /// The reference file's cases: prompt, its ids, the greedy ids and each step's logits.
    static func references(_ model: String) throws -> [(prompt: String, promptIDs: [Int32], greedyIDs: [Int32], logits: [[Double]])] {
        let root = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: try shared("reference/\(model).json")))) as? [String: Any])
        return try #require(root["cases"] as? [[String: Any]]).map { entry in
            (entry["prompt"] as? String ?? "", (entry["prompt_ids"] as? [Int] ?? []).map(Int32.init),
             (entry["greedy_ids"] as? [Int] ?? []).map(Int32.init), entry["logits"] as? [[Double]] ?? [])
        }
    }

    static func greedy(_ count: Int) -> GenerationOptions {
        GenerationOptions(sampling: .greedy, maxTokens: count, stopAtEndOfSequence: false)
    }

    @Test("generate streams llama.cpp's greedy ids, from text or tokens", arguments: ["stories260K", "quant-test-f32"])
    func greedyGeneration(model name: String) async throws {
        let container = try await ModelContainer.load(try Self.shared("models/\(name).gguf"), settings: .init(threads: 2))
        for reference in try Self.references(name) {
            #expect(container.tokenize(reference.prompt) == reference.promptIDs)
            var ids: [Int32] = []
            var summary: GenerationSummary?
            for try await event in container.generate(reference.prompt, options: Self.greedy(reference.greedyIDs.count)) {
                switch event {
                case .token(let token): ids.append(token.id)
                case .finished(let finished): summary = finished
                }
            }
            #expect(ids == reference.greedyIDs)
            #expect(summary?.finishReason == .length)
            let fromTokens = try await GenerationCollector.collect(container.generate(tokens: reference.promptIDs, options: Self.greedy(reference.greedyIDs.count)))
            #expect(fromTokens.tokens.map(\.id) == reference.greedyIDs)
        }
    }

    @Test("nextTokens are the likeliest of llama.cpp's logits, with their log-probabilities")
    func nextTokens() async throws {
        let container = try await ModelContainer.load(try Self.shared("models/quant-test-f32.gguf"), settings: .init(threads: 2))
        for reference in try Self.references("quant-test-f32") {
            let row = try #require(reference.logits.first)
            let largest = row.max() ?? 0
            let logSum = largest + log(row.reduce(0) { $0 + exp($1 - largest) })
            let expected = row.indices.sorted { row[$0] > row[$1] }.prefix(5)
            let top = try await container.nextTokens(after: reference.prompt, k: 5)
            #expect(top.map(\.id) == expected.map(Int32.init))
            for (entry, index) in zip(top, expected) {
                // Each logit within the 1e-3 the reference tests allow, so the log-probability within twice that.
                #expect(abs(Double(entry.logProbability) - (row[index] - logSum)) < 2e-3)
                #expect(entry.text == container.model.tokenizer.textPiece(entry.id))
            }
        }
    }

    @Test("a consumer that cancels stops its generation within tokens and frees the session")
    func cancellation() async throws {
        // SmolLM2 on one thread makes ~100 tokens a second: a thousand cannot outrun the consumer
        // however loaded the machine, and an uncancelled generation runs to the 4096-token context.
        let path = ProcessInfo.processInfo.environment["LUMEN_MODEL_CACHE"]
            ?? (FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/lumen/models")
        let container = try await ModelContainer.load(path + "/SmolLM2-135M-Instruct.Q4_1.gguf",
                                                      settings: .init(contextLength: 4096, threads: 1, sequencesPerSession: 1))
        let consumer = Task {
            var received = 0
            for try await event in container.generate("Once upon a time", options: Self.greedy(100_000_000)) {
                if case .token = event {
                    received += 1
                    if received == 5 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            return received
        }
        #expect(try await consumer.value < 1000, "generation went on after cancellation")
        // The session is free again: a lease waiting longer than a loaded machine ever takes would fail.
        let lease = try await container.sessions.lease(waitLimit: .seconds(600))
        lease.release()
    }

    @Test("a raised stop ends the stream with its summary, and the run log records it as interrupted with its tokens")
    func recording() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lumenkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try await RunLog.open(path: folder.appendingPathComponent("runs.sqlite").path) { _ in }
        let container = try await ModelContainer.load(try Self.shared("models/stories260K.gguf"),
                                                      recorder: RunRecorder(log: log, origin: RunOrigin(frontEnd: "swift")))
        let stop = StopSignal()
        var tokens: [GeneratedToken] = []
        var summary: GenerationSummary?
        for try await event in container.generate("Once upon a time", options: Self.greedy(10_000), stop: stop,
                                                  run: RunDescription(entry: "test")) {
            switch event {
            case .token(let token):
                tokens.append(token)
                if tokens.count == 3 { stop.raise() }
            case .finished(let finished): summary = finished
            }
        }
        #expect(summary != nil)
        await log.flush()
        let runs = try await log.runs(RunQuery())
        let run = try #require(runs.first)
        #expect(runs.count == 1)
        #expect(run.entry == "test" && run.origin.frontEnd == "swift" && run.prompt == "Once upon a time")
        #expect(run.interrupted && run.finishReason == "interrupted")
        #expect(run.tokenIDs == tokens.map(\.id))
    }

    /// A program's own place for run records, as a library user would write one: kept in memory.
    final class RecordsInMemory: RunRecording {
        let records = Mutex<[RunRecord]>([])
        func record(_ record: RunRecord) { records.withLock { $0.append(record) } }
    }

    @Test("a program's own recorder, no database, gets each finished generation's record")
    func recordingWithoutTheRunLog() async throws {
        let kept = RecordsInMemory()
        let container = try await ModelContainer.load(try Self.shared("models/stories260K.gguf"),
                                                      recorder: RunRecorder(log: kept, origin: RunOrigin(frontEnd: "embedded")))
        var ids: [Int32] = []
        for try await event in container.generate("Once upon a time", options: Self.greedy(5), run: RunDescription(entry: "example")) {
            if case .token(let token) = event { ids.append(token.id) }
        }
        let records = kept.records.withLock { $0 }
        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record.kind == .generation && record.entry == "example" && record.origin.frontEnd == "embedded")
        #expect(record.prompt == "Once upon a time" && record.tokenIDs == ids && ids.count == 5 && !record.interrupted)
    }

    @Test("a generation's record names the LoRA adapters it ran under: the container's, none, or its own")
    func recordsAdapters() async throws {
        let environment = ProcessInfo.processInfo.environment
        let model = try LanguageModel(path: (environment["LUMEN_SYNTHETIC_MODELS"] ?? ".build/synthetic-models") + "/llama3.gguf")
        let file = (environment["LUMEN_ADAPTERS"] ?? ".build/adapters") + "/llama3-r8.gguf"
        let kept = RecordsInMemory()
        let container = ModelContainer(model: model, settings: ModelContainer.Settings(adapters: try AdapterSet(files: [(file, 0.7)], for: model)),
                                       recorder: RunRecorder(log: kept, origin: RunOrigin(frontEnd: "embedded")))
        for adapters in [nil, AdapterSet.none, try AdapterSet(files: [(file, -1)], for: model)] {
            _ = try await GenerationCollector.collect(container.generate("Once upon a time", options: Self.greedy(2), adapters: adapters))
        }
        let logged = URL(fileURLWithPath: file).standardizedFileURL.path
        #expect(kept.records.withLock { $0 }.map(\.model.adapters) == [[RunAdapter(path: logged, scale: 0.7)], nil, [RunAdapter(path: logged, scale: -1)]])
    }

    @Test("a constrained generation follows its grammar; a grammar that cannot be made is the stream's error")
    func constrained() async throws {
        let container = try await ModelContainer.load(try Self.shared("models/stories260K.gguf"))
        var options = Self.greedy(16)
        options.stopAtEndOfSequence = true
        options.constraint = .choice(["Lily", "Ben", "the cat"])
        let collected = try await GenerationCollector.collect(container.generate("Once upon a time", options: options))
        #expect(["Lily", "Ben", "the cat"].contains(collected.text))
        options.constraint = .grammar("root ::= undefined-rule")
        await #expect(throws: GrammarError.self) {
            _ = try await GenerationCollector.collect(container.generate("Once upon a time", options: options))
        }
    }

    @Test("a prompt that does not fit is an error from the stream, naming the context")
    func promptTooLong() async throws {
        let container = try await ModelContainer.load(try Self.shared("models/stories260K.gguf"), settings: .init(contextLength: 16))
        await #expect(throws: ModelError.self) {
            _ = try await GenerationCollector.collect(container.generate(tokens: Array(repeating: 1, count: 64), options: Self.greedy(4)))
        }
    }
}
