import Foundation
import FuzzSupport
import Testing
@testable import LumenLanguage

@Suite("Fuzzing the Lumen parser")
struct ParserFuzzTests {
    /// The example scripts and a few constructs each statement kind uses.
    static func seeds() throws -> [[UInt8]] {
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".lumen") }
        let scripts = try files.map { Array(try String(contentsOf: examples.appendingPathComponent($0), encoding: .utf8).utf8) }
        let snippets = [
            "let s = \"\"\"\n  a \\(x + 1)\n  \"\"\"", "func f(_ a, label b: Int = 2) { return a ?? b }", "for (i, x) in xs.enumerated() { if i > 1 { break } }",
            "xs.map { $0 * 2 }.filter { $0 > 1 }", "let d = [\"a\": [1, 2.5, nil], \"b\": [:]]", "while true { x -= 1; guard x > 0 else { break } }",
            "%%time\nsleep(0.1)", "name?", "/* a /* nested */ comment */ 0x1F &+ 1_000", "a ? b : c ? d : e", "r[1..<3]",
        ]
        return scripts + snippets.map { Array($0.utf8) }
    }

    @Test("30,000 mutated cells parse or fail with a LumenError saying why, never a crash", .timeLimit(.minutes(10)))
    func mutatedCells() throws {
        var mutator = SeededMutator(seeds: try Self.seeds(), dictionary: ["\"\"\"", "\\(", "{", "}", "(", ")", "[", "]", "/*", "*/", "$0", "..<", "...", "?", ":", "func", "let", "for", "in", "while"])
        var parsed = 0
        var refused = 0
        for _ in 0..<30_000 {
            let source = String(decoding: mutator.nextInput(), as: UTF8.self)
            do {
                _ = try Parser.parse(source)
                parsed += 1
            } catch {
                #expect(!error.message.isEmpty)
                refused += 1
            }
        }
        #expect(parsed > 0 && refused > 0)
    }
}
