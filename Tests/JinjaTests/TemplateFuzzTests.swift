import Foundation
import FuzzSupport
import Jinja
import Testing

@Suite("Fuzzing the template engine")
struct TemplateFuzzTests {
    @Test("5,000 mutated chat templates parse and render or fail with a TemplateError, never a crash or a hang", .timeLimit(.minutes(10)))
    func mutatedTemplates() throws {
        let folder = try #require(ChatTemplateReferenceTests.folder, "LUMEN_TEST_DATA must name the shared folder (make test sets it)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jinja") }.sorted()
        let seeds = try names.map { Array(try String(contentsOfFile: folder + "/" + $0, encoding: .utf8).utf8) }
        var mutator = SeededMutator(seeds: seeds, dictionary: ["{%", "%}", "{{", "}}", "{#", "#}", "endfor", "endif", "loop.index", "|tojson", "|length", "raise_exception(", "namespace(", "[::-1]", "~"])
        let message: (String, String) -> TemplateValue = { role, content in .dictionary(TemplateValue.Dictionary([("role", .string(role)), ("content", .string(content))])) }
        let variables: [String: TemplateValue] = [
            "messages": .list([message("system", "Be brief."), message("user", "Hi"), message("assistant", "Hello"), message("user", "2+2?")]),
            "add_generation_prompt": .bool(true), "bos_token": "<BOS>", "eos_token": "<EOS>", "tools": .none,
        ]
        var rendered = 0
        var refused = 0
        for _ in 0..<5_000 {
            let source = String(decoding: mutator.nextInput(), as: UTF8.self)
            do {
                _ = try Template(source).render(variables, environment: ChatTemplateReferenceTests.environment)
                rendered += 1
            } catch {
                refused += 1
            }
        }
        #expect(rendered > 0 && refused > 0)
    }
}
