import Foundation
import Testing
@testable import Grammars

/// A vocabulary of the 256 bytes (token b is byte b) and an end-of-generation token (256), so a
/// string is fed to a grammar byte by byte, characters split across tokens.
let byteTrie = TokenTrie(pieces: (0..<256).map { [UInt8($0)] } + [[]], endOfGeneration: [256])

/// Whether `grammar` accepts the whole of `text`, fed a byte at a time, and whether the mask
/// agreed with the check at every step.
func accepts(_ grammar: Grammar, _ text: String) -> (accepted: Bool, masksAgree: Bool) {
    var matcher = GrammarMatcher(grammar, trie: byteTrie)
    var masksAgree = true
    for byte in text.utf8 {
        let mask = matcher.allowedTokens()
        let allowed = mask[Int(byte) >> 6] & (1 << UInt64(byte & 63)) != 0
        if allowed != matcher.allows(Int32(byte)) { masksAgree = false }
        guard matcher.accept(Int32(byte)) else { return (false, masksAgree) }
    }
    let endAllowed = matcher.allowedTokens()[4] & 1 != 0
    if endAllowed != matcher.canEnd || endAllowed != matcher.allows(256) { masksAgree = false }
    return (matcher.canEnd, masksAgree)
}

/// Lumen's grammars give llama.cpp's verdicts (its test-gbnf-validator, recorded by
/// scripts/make_grammar_references.py) on every string of Tests/reference/grammars.
@Suite struct GrammarMatchingTests {
    struct Case: Decodable {
        struct Input: Decodable {
            let text: String
            let valid: Bool
        }
        let grammar: String
        let parses: Bool
        let inputs: [Input]
    }

    static let cases: [Case] = {
        struct File: Decodable { let cases: [Case] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/grammars/gbnf-cases.json")
        // A missing or broken reference file fails the tests below (no cases would pass vacuously).
        return (try? JSONDecoder().decode(File.self, from: Data(contentsOf: url)).cases) ?? []
    }()

    @Test func referenceCasesExist() {
        #expect(Self.cases.count >= 20)
        #expect(Self.cases.contains { !$0.parses })
        #expect(Self.cases.flatMap(\.inputs).count >= 100)
    }

    @Test func llamaCppsVerdicts() throws {
        for reference in Self.cases {
            let grammar: Grammar
            do {
                grammar = try Grammar(gbnf: reference.grammar)
            } catch {
                #expect(!reference.parses, "llama.cpp parses \(reference.grammar), Lumen says \(error)")
                continue
            }
            #expect(reference.parses, "llama.cpp refuses \(reference.grammar), Lumen parses it")
            for input in reference.inputs {
                let (accepted, masksAgree) = accepts(grammar, input.text)
                #expect(accepted == input.valid, "grammar \(reference.grammar) on \(input.text.debugDescription)")
                #expect(masksAgree, "mask and check differ: \(reference.grammar) on \(input.text.debugDescription)")
            }
        }
    }

    /// Tokens of several characters, spanning grammar elements, and characters split between
    /// tokens: the mask allows exactly the tokens that keep the output inside the grammar, checked
    /// against strings the grammar is asked about directly.
    @Test func multiByteTokensSpanElements() throws {
        let grammar = try Grammar(gbnf: #"root ::= "{\"k\": " [0-9]+ ("é" | "😀")? "}""#)
        let texts = ["{", "{\"", "{\"k\": 1", "1", "2}", "12", "é}", "}", "😀", "\u{F0}", "\u{9F}\u{98}", "\"k\": 4", "a", "é", "😀}"]
        var pieces = texts.map { Array($0.utf8) }
        // Raw bytes: the first and the rest of 😀 (F0 9F 98 80).
        pieces += [[0xF0], [0x9F, 0x98], [0x80], [0x80, 0x7D]]
        let trie = TokenTrie(pieces: pieces + [[]], endOfGeneration: [Int32(pieces.count)])
        var matcher = GrammarMatcher(grammar, trie: trie)
        func allowed() -> [Int] {
            let mask = matcher.allowedTokens()
            return (0..<trie.vocabularySize).filter { mask[$0 >> 6] & (1 << UInt64($0 & 63)) != 0 }
        }
        func take(_ token: Int32) throws {
            let taken = matcher.accept(token)
            try #require(taken, "token \(token) refused")
        }
        #expect(allowed() == [0, 1, 2])
        try take(0)
        #expect(allowed() == [11])
        try take(11)
        // A digit, "2}", "12", "é}", "}", "😀", "é", "😀}", and 😀's first byte.
        #expect(allowed() == [3, 4, 5, 6, 7, 8, 13, 14, 15])
        try take(15)
        let continuationAlone = matcher.allows(17)
        #expect(!continuationAlone, "a lone continuation byte cannot finish 😀 after F0")
        #expect(allowed() == [16])
        try take(16)
        #expect(allowed() == [17, 18])
        #expect(!matcher.canEnd)
        try take(18)
        #expect(matcher.canEnd && matcher.isComplete)
        #expect(allowed() == [trie.vocabularySize - 1])
    }
}
