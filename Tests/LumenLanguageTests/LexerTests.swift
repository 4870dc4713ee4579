import Testing
@testable import LumenLanguage

private typealias SourceLocation = LumenLanguage.SourceLocation

@Suite("Lexer")
struct LexerTests {
    func kinds(_ source: String) throws -> [Token.Kind] {
        try Lexer.tokenize(source).map(\.kind)
    }

    @Test("literals, names, keywords and symbols")
    func tokens() throws {
        #expect(try kinds(#"let x = 1_000 + 2.5e3 // note"#) == [
            .keyword("let"), .identifier("x"), .symbol("="), .integer(1000), .symbol("+"), .float(2500), .end,
        ])
        #expect(try kinds("a..<b...c ?? d") == [
            .identifier("a"), .symbol("..<"), .identifier("b"), .symbol("..."), .identifier("c"), .symbol("??"), .identifier("d"), .end,
        ])
    }

    @Test("string escapes")
    func escapes() throws {
        #expect(try kinds(#""a\tb\n\"q\" \\ \u{1F600}""#) == [.string("a\tb\n\"q\" \\ 😀"), .end])
    }

    @Test("newlines end statements except inside brackets; comments are skipped")
    func newlines() throws {
        #expect(try kinds("f(1,\n 2)\n/* block\n comment */g") == [
            .identifier("f"), .symbol("("), .integer(1), .symbol(","), .integer(2), .symbol(")"), .newline, .identifier("g"), .end,
        ])
    }

    @Test("errors point at line and column")
    func errors() {
        let cases: [(String, String, SourceLocation, Bool)] = [
            ("print(\"abc", "unterminated string literal", SourceLocation(line: 1, column: 7), false),
            ("1\n  9223372036854775808", "integer literal 9223372036854775808 does not fit in 64 bits", SourceLocation(line: 2, column: 3), false),
            (#""\q""#, "invalid escape sequence \\q", SourceLocation(line: 1, column: 3), false),
            ("a @ b", "unexpected character '@'", SourceLocation(line: 1, column: 3), false),
            ("/* open", "unterminated comment", SourceLocation(line: 1, column: 1), true),
            ("12abc", "'a' is not valid in a number", SourceLocation(line: 1, column: 3), false),
        ]
        for (source, message, location, needsMore) in cases {
            #expect(throws: LumenError(.syntax, message, at: location, needsMoreInput: needsMore)) {
                try Lexer.tokenize(source)
            }
        }
    }
}

@Suite("Parser")
struct ParserTests {
    @Test("calls with positional and labelled arguments")
    func calls() throws {
        let statements = try Parser.parse("display(html: \"x\")\nprint(1, -2.5)")
        #expect(statements.count == 2)
        guard case .expression(.call(.identifier("display", _), let arguments, _)) = statements[0] else {
            Issue.record("not a call: \(statements[0])")
            return
        }
        #expect(arguments.map(\.label) == ["html"])
    }

    @Test("syntax errors say what was expected, where, and whether more input could help")
    func errors() {
        #expect(throws: LumenError(.syntax, "expected ')' to close the argument list, found end of input", at: SourceLocation(line: 1, column: 8), needsMoreInput: true)) {
            try Parser.parse("print(1")
        }
        #expect(throws: LumenError(.syntax, "expected end of statement, found a string", at: SourceLocation(line: 1, column: 7))) {
            try Parser.parse("print \"x\"")
        }
        #expect(throws: LumenError(.syntax, "expected an expression, found ')'", at: SourceLocation(line: 2, column: 1))) {
            try Parser.parse("1\n)")
        }
    }

    @Test("absurdly deep nesting is a syntax error, not a stack overflow")
    func deepNesting() {
        for source in [String(repeating: "(", count: 100_000) + "1", String(repeating: "-", count: 100_000) + "1",
                       String(repeating: "if true {", count: 50_000), String(repeating: "[", count: 100_000),
                       String(repeating: "\"\\(", count: 5_000) + "1" + String(repeating: ")\"", count: 5_000)] {
            #expect(throws: LumenError.self) { try Parser.parse(source) }
        }
    }

    @Test("any input either parses or gives a syntax error, never a crash")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abc019 _\"\\(){}[],.:;+-*/%<>=!?$\n\t/*é😀u{")
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let source = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            do {
                _ = try Parser.parse(source)
            } catch {
                #expect(error.kind == .syntax)
            }
        }
    }
}
