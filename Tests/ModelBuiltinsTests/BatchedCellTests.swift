import Evaluation
import Foundation
import LanguageTestSupport
import LumenLanguage
import Testing
@testable import ModelBuiltins

@Suite("Batched decoding in cells")
struct BatchedCellTests {
    @Test("n: samples, batch and jobs on one model decode together and give what each gives alone; n: names what it cannot go with")
    func samplesAndBatches() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf", parallel: 4)
            let samples = generate(m, "Once upon a time", n: 4, seed: 7, temperature: 0.9, maxTokens: 24)
            let alone = [7, 8, 9, 10].map { generate(m, "Once upon a time", seed: $0, temperature: 0.9, maxTokens: 24) }
            let prompts = ["Lily went", "The dog", "One day, a", "Tom and Sue", "The sun was"]
            let together = batch(m, prompts, temperature: 0, maxTokens: 20)
            let each = prompts.map { generate(m, $0, temperature: 0, maxTokens: 20) }
            """, on: interpreter)
        #expect(try await cellValue("samples.count", interpreter) == "4")
        #expect(try await cellValue("samples.map { $0.text } == alone.map { $0.text }", interpreter) == "true")
        #expect(try await cellValue("samples.map { $0.tokens.map { $0[\"id\"] } } == alone.map { $0.tokens.map { $0[\"id\"] } }", interpreter) == "true")
        #expect(try await cellValue("samples[0].text != samples[1].text || samples[0].text != samples[2].text", interpreter) == "true")
        #expect(try await cellValue("together.map { $0.text } == each.map { $0.text }", interpreter) == "true")
        #expect(try await cellValue("m.info[\"parallel\"]", interpreter) == "4")
        for (code, expected) in [("generate(m, \"Once\", n: 0)", "n: takes 1 to 256 samples, got 0"),
                                 ("generate(m, \"Once\", n: 2, lookup: 2)", "n: samples cannot be combined with lookup: or draft:"),
                                 ("load(\"\(models)/stories260K.gguf\", parallel: 0)", "parallel")] {
            await #expect { try await runCell(code, on: interpreter) } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }
}
