import Testing
@testable import Grammars

/// Grammars that cannot be used fail with the line, column and what is wrong (llama.cpp prints a
/// message and drops the grammar).
@Suite struct GBNFParserTests {
    /// The error `text` fails with.
    private func failure(_ text: String, tokenNamed: ((String) -> Int32?)? = nil) -> GrammarError? {
        do {
            _ = try Grammar(gbnf: text, tokenNamed: tokenNamed)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("root ::= missing", 1, 10, "rule \"missing\" is used but not defined"),
        ("root := \"a\"", 1, 6, "expected ::="),
        ("root ::= \"a\"\nitem ::= \"unclosed\n", 2, 10, "string literal is not closed"),
        ("root ::= [a-", 1, 10, "character class is not closed"),
        ("root ::= \"a\" \\q", 1, 14, "unexpected '\\'"),
        ("root ::= \"a\\q\"", 1, 12, "unknown escape \\q"),
        ("root ::= (\"a\" | \"b\"", 1, 10, "group is not closed with )"),
        ("root ::= \"a\"\n\n  # comment\nx ::= x \"b\" | \"b\"", 4, 1, "rule \"x\" is left-recursive"),
        ("root ::= [z-a]", 1, 11, "range U+007A-U+0061 is empty"),
        ("root ::= * \"a\"", 1, 10, "* has nothing before it to repeat"),
        ("root ::= \"a\"{3,2}", 1, 13, "maximum below its minimum"),
        ("root ::= \"a\"{3001}", 1, 13, "above 2000"),
        ("root ::= \"\\xZZ\"", 1, 11, "needs 2 hexadecimal digits"),
        ("root ::= \"ü\" ü", 1, 14, "unexpected 'ü'"),
        ("root ::= <[12]> <think>", 1, 17, "can only be named with a model's vocabulary"),
        ("root ::= \"a\"\nroot ::= \"b\"", 2, 1, "rule \"root\" is defined twice"),
    ])
    func errorsNameTheirPlace(text: String, line: Int, column: Int, reason: String) throws {
        let error = try #require(failure(text))
        #expect(error.location == .text(line: line, column: column), "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
        #expect(error.description.hasPrefix("grammar, line \(line), column \(column): "))
    }

    @Test func aGrammarNeedsARoot() throws {
        let error = try #require(failure("other ::= \"a\""))
        #expect(error.location == .whole)
        #expect(error.description == "grammar: has no rule named root, where the output starts")
    }

    @Test func tokensByNameNeedTheVocabulary() throws {
        let vocabulary = ["<think>": Int32(7)]
        let grammar = try Grammar(gbnf: "root ::= <think> !<[3]>* <[9]>", tokenNamed: { vocabulary[$0] })
        #expect(grammar.rules[Int(grammar.root)].first?.first == .token(7))
        let error = try #require(failure("root ::= <nothink>", tokenNamed: { vocabulary[$0] }))
        #expect(error.reason == "<nothink> is not a single token of the model's vocabulary")
    }
}
