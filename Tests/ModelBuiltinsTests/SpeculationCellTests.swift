import Evaluation
import Foundation
import LanguageTestSupport
import LumenLanguage
import Testing
@testable import ModelBuiltins

@Suite("Speculative decoding in cells")
struct SpeculationCellTests {
    @Test("lookup: and draft: give plain decoding's tokens and report drafted and accepted tokens; their mistakes name the option")
    func speculationInCells() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        // A prompt that repeats itself: a story's opening, twice.
        let prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside. Once upon a time, there was a little girl"
        try await runCell("""
            let m = load("\(models)/stories260K.gguf")
            let plain = m.generate("\(prompt)", maxTokens: 40, temperature: 0)
            let lookup = m.generate("\(prompt)", maxTokens: 40, temperature: 0, lookup: 2, draftMax: 8)
            let drafted = m.generate("\(prompt)", maxTokens: 40, temperature: 0.9, seed: 3, draft: m)
            let sampled = m.generate("\(prompt)", maxTokens: 40, temperature: 0.9, seed: 3)
            """, on: interpreter)
        #expect(try await cellValue("lookup.tokens.map { $0[\"id\"] } == plain.tokens.map { $0[\"id\"] }", interpreter) == "true")
        #expect(try await cellValue("drafted.tokens.map { $0[\"id\"] } == sampled.tokens.map { $0[\"id\"] }", interpreter) == "true")
        let drafts = Int(try await cellValue("lookup.stats[\"draftedTokens\"]", interpreter)) ?? 0
        let accepted = Int(try await cellValue("lookup.stats[\"acceptedTokens\"]", interpreter)) ?? -1
        #expect(drafts > 0 && accepted > 0 && accepted <= drafts)
        #expect(try await cellValue("plain.stats.keys.count", interpreter) == "6")
        #expect(try await cellValue("lookup", interpreter).contains("drafted, \(accepted) accepted"))
        for (code, expected) in [("m.generate(\"Once\", lookup: 0)", "lookup: needs the length of the n-gram"),
                                 ("m.generate(\"Once\", lookup: 2, draft: m)", "give one"),
                                 ("m.generate(\"Once\", draftMax: 4)", "draftMax: needs lookup: or draft:"),
                                 ("m.generate(\"Once\", draft: 3)", "draft: needs a model loaded with load()")] {
            await #expect { try await runCell(code, on: interpreter) } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }
}
