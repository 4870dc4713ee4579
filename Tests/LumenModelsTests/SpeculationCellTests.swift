import Evaluation
import Foundation
import LanguageTestSupport
import LumenLanguage
import Testing
@testable import LumenModels

@Suite("Speculative decoding in cells")
struct SpeculationCellTests {
    func run(_ code: String, on interpreter: Interpreter, sink: RecordingSink = RecordingSink()) async throws {
        try await interpreter.execute(ExecutionRequest(code: code, executionCount: 1), output: sink)
    }

    func value(_ code: String, _ interpreter: Interpreter) async throws -> String {
        let sink = RecordingSink()
        try await run(code, on: interpreter, sink: sink)
        return sink.results.last ?? ""
    }

    @Test("lookup: and draft: give plain decoding's tokens and report drafted and accepted tokens; their mistakes name the option")
    func speculationInCells() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        // A prompt that repeats itself: a story's opening, twice.
        let prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside. Once upon a time, there was a little girl"
        try await run("""
            let m = load("\(models)/stories260K.gguf")
            let plain = m.generate("\(prompt)", maxTokens: 40, temperature: 0)
            let lookup = m.generate("\(prompt)", maxTokens: 40, temperature: 0, lookup: 2, draftMax: 8)
            let drafted = m.generate("\(prompt)", maxTokens: 40, temperature: 0.9, seed: 3, draft: m)
            let sampled = m.generate("\(prompt)", maxTokens: 40, temperature: 0.9, seed: 3)
            """, on: interpreter)
        #expect(try await value("lookup.tokens.map { $0[\"id\"] } == plain.tokens.map { $0[\"id\"] }", interpreter) == "true")
        #expect(try await value("drafted.tokens.map { $0[\"id\"] } == sampled.tokens.map { $0[\"id\"] }", interpreter) == "true")
        let drafts = Int(try await value("lookup.stats[\"draftedTokens\"]", interpreter)) ?? 0
        let accepted = Int(try await value("lookup.stats[\"acceptedTokens\"]", interpreter)) ?? -1
        #expect(drafts > 0 && accepted > 0 && accepted <= drafts)
        #expect(try await value("plain.stats.keys.count", interpreter) == "6")
        #expect(try await value("lookup", interpreter).contains("drafted, \(accepted) accepted"))
        for (code, expected) in [("m.generate(\"Once\", lookup: 0)", "lookup: needs the length of the n-gram"),
                                 ("m.generate(\"Once\", lookup: 2, draft: m)", "give one"),
                                 ("m.generate(\"Once\", draftMax: 4)", "draftMax: needs lookup: or draft:"),
                                 ("m.generate(\"Once\", draft: 3)", "draft: needs a model loaded with load()")] {
            await #expect { try await run(code, on: interpreter) } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }
}
