import Evaluation
import Foundation
import GenerationTypes
import Inference
import LanguageTestSupport
import LumenLanguage
import Testing
@testable import ModelBuiltins

@Suite("States as values in cells")
struct StateCellTests {
    static let prompt = "Once upon a time, there was a little girl named Lily. She loved to play"

    /// The greedy ids a brand-new session gives for `tokens`, read from scratch.
    static func freshIDs(_ tokens: [Int32], models: String, count: Int) async throws -> [Int32] {
        let model = try LanguageModel(path: models + "/stories260K.gguf")
        var ids: [Int32] = []
        for try await event in ModelSession(model: model, threads: 1).generate(tokens: tokens, options: GenerationOptions(sampling: .greedy, maxTokens: count)) {
            if case .token(let token) = event { ids.append(token.id) }
        }
        return ids
    }

    static func ids(_ text: String) -> [Int32] {
        text.dropFirst().dropLast().split(separator: ",").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test("two continuations of one state each reuse all of it (whatever the session's cache held since) and generate as a fresh session given the whole prompt")
    func continuationsReuseTheState() async throws {
        let models = try sharedModelsDirectory()
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf", instances: 1)
            let s = prefill(m, "\(Self.prompt)")
            generate(m, "A dog", maxTokens: 2)
            let a = s.generate(" with", maxTokens: 12, temperature: 0)
            generate(m, "A dog", maxTokens: 2)
            let b = generate(s, " in", maxTokens: 12, temperature: 0)
            """, on: interpreter)
        let stateIDs = Self.ids(try await cellValue("s.ids", interpreter))
        let model = try LanguageModel(path: models + "/stories260K.gguf")
        #expect(stateIDs == model.tokenizer.encode(Self.prompt))
        for (name, word) in [("a", " with"), ("b", " in")] {
            let whole = stateIDs + model.tokenizer.encode(word, addSpecial: false)
            #expect(try await cellValue("\(name).stats[\"promptTokens\"]", interpreter) == String(whole.count))
            #expect(try await cellValue("\(name).stats[\"reusedPromptTokens\"]", interpreter) == String(stateIDs.count), "\(name) read the state again")
            let fresh = try await Self.freshIDs(whole, models: models, count: 12)
            #expect(Self.ids(try await cellValue("\(name).tokens.map { $0[\"id\"] }", interpreter)) == fresh)
        }
        // Extending a state reads only the new text.
        try await runCell("let longer = s.prefill(\" with her\")", on: interpreter)
        let longer = Self.ids(try await cellValue("longer.ids", interpreter))
        #expect(longer == stateIDs + model.tokenizer.encode(" with her", addSpecial: false))
        #expect(Int(try await cellValue("longer.bytes", interpreter)) == longer.count * model.configuration.blockCount * 2 * model.configuration.kvDimension * 4)
    }

    @Test("a saved state reads back whole and continues as the original; another model's file, a corrupt file and a reloaded model are refused")
    func savedStatesRoundTrip() async throws {
        let models = try sharedModelsDirectory()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-states-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let interpreter = modelInterpreter()
        try await runCell("""
            let m = load("\(models)/stories260K.gguf")
            let s = prefill(m, "\(Self.prompt)")
            save(s, "\(folder)/s.state")
            let t = loadState(m, "\(folder)/s.state")
            """, on: interpreter)
        #expect(try await cellValue("t.ids == s.ids", interpreter) == "true")
        #expect(try await cellValue("t.bytes == s.bytes", interpreter) == "true")
        #expect(try await cellValue("t.generate(\" with\", maxTokens: 12, temperature: 0).text == s.generate(\" with\", maxTokens: 12, temperature: 0).text", interpreter) == "true")

        // A copy of the model file with one metadata byte changed has another SHA-256.
        var other = try Data(contentsOf: URL(fileURLWithPath: models + "/stories260K.gguf"))
        other[other.count - 1] ^= 1
        try other.write(to: URL(fileURLWithPath: folder + "/other.gguf"))
        var state = try Data(contentsOf: URL(fileURLWithPath: folder + "/s.state"))
        state[state.count - 5] ^= 0x40
        try state.write(to: URL(fileURLWithPath: folder + "/corrupt.state"))
        for (code, expected) in [("loadState(load(\"\(folder)/other.gguf\"), \"\(folder)/s.state\")", "was made by another model file"),
                                 ("loadState(m, \"\(folder)/corrupt.state\")", "is corrupt"),
                                 ("loadState(m, \"\(folder)/missing.state\")", "cannot be read")] {
            await #expect { try await runCell(code, on: interpreter) } throws: { error in
                "\(error)".contains(expected)
            }
        }
        try await runCell("reload(m)", on: interpreter)
        await #expect { try await runCell("s.generate(\" with\", maxTokens: 4)", on: interpreter) } throws: { error in
            "\(error)".contains("before it was reloaded")
        }
    }
}
