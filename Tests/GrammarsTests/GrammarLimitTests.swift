import FuzzSupport
import GenerationTypes
import Testing
@testable import Grammars

/// Hostile grammars and schemas are refused naming the limit they cross and where, never a crash
/// or a stall: the shapes that took `lumen serve` down (a 60 KB nest of groups, a chain of 100,000
/// rules), and a seeded fuzzer of adversarial and mutated grammars and schemas, each compiled and
/// followed over the byte vocabulary.
@Suite struct GrammarLimitTests {
    /// The error `text` fails with, if it does.
    private func failure(_ text: String, limits: GrammarLimits = .standard) -> GrammarError? {
        do {
            _ = try Grammar(gbnf: text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    /// A chain of `count` rules, each its next one, the last a literal.
    private func chain(_ count: Int, closing: String = "\"a\"") -> String {
        "root ::= r0\n" + (0..<count).map { "r\($0) ::= r\($0 + 1)\n" }.joined() + "r\(count) ::= \(closing)\n"
    }

    @Test("30,000 nested groups are refused at the group past the limit", .timeLimit(.minutes(10)))
    func deepNesting() throws {
        let text = "root ::= " + String(repeating: "(", count: 30_000) + "\"a\"" + String(repeating: ")", count: 30_000)
        let error = try #require(failure(text))
        #expect(error.location == .text(line: 1, column: 10 + GrammarLimits.standard.nesting), "\(error)")
        #expect(error.reason == "groups nest more than 256 deep, the most allowed")
        // At the limit it compiles and matches.
        let atLimit = "root ::= " + String(repeating: "(", count: 256) + "\"a\"" + String(repeating: ")", count: 256)
        #expect(accepts(try Grammar(gbnf: atLimit), "a") == (true, true))
    }

    @Test("a chain of 100,000 rules is refused at the rule past the limit; one within it compiles and matches", .timeLimit(.minutes(10)))
    func longChains() throws {
        let error = try #require(failure(chain(100_000)))
        #expect(error.location == .text(line: 20_000, column: 12), "\(error)")
        #expect(error.reason == "the grammar has more than 20000 rules, the most allowed")
        // Before: quadratic locations and a recursion per rule (SIGSEGV); now linear.
        let long = try Grammar(gbnf: chain(19_990))
        #expect(accepts(long, "a") == (true, true))
        #expect(accepts(long, "b").accepted == false)
        // A cycle through the whole chain is found without recursion.
        let cycle = try #require(failure(chain(19_990, closing: "r0 \"a\"")))
        #expect(cycle.reason.contains("is left-recursive"), "\(cycle)")
        // Nullable chains: every rule may be empty, so the cycle through them is left recursion too.
        let nullable = "root ::= r0 \"x\"\n" + (0..<19_000).map { "r\($0) ::= r\($0 + 1) | \"\"\n" }.joined() + "r19000 ::= r0 \"a\" | \"\"\n"
        #expect(failure(nullable)?.reason.contains("is left-recursive") == true)
    }

    @Test("alternatives, symbols and rules made by repetitions have limits of their own", .timeLimit(.minutes(10)))
    func otherLimits() throws {
        let wide = "root ::= " + (0..<10_001).map { "\"\($0)\"" }.joined(separator: " | ")
        #expect(failure(wide)?.reason == "rule \"root\" has more than 10000 alternatives, the most allowed")
        let wideGroup = "root ::= (" + (0..<10_001).map { "\"\($0)\"" }.joined(separator: " | ") + ")"
        #expect(failure(wideGroup)?.reason == "this group has more than 10000 alternatives, the most allowed")
        // 600 sequences of 2,000 copies: 1.2 million symbols.
        let copies = "root ::= " + (0..<600).map { _ in "\"ab\"{2000}" }.joined(separator: " ")
        #expect(failure(copies)?.reason.hasPrefix("the grammar grows past 1000000 symbols") == true)
        #expect(failure("root ::= (\"a\"{0,2000}){0,2000} (\"b\"{0,2000}){0,2000} (\"c\"{0,2000}){0,2000} (\"d\"{0,2000}){0,2000} " +
                        "(\"e\"{0,2000}){0,2000} (\"f\"{0,2000}){0,2000}")?.reason.hasPrefix("repetition makes the grammar more than 20000 rules") == true)
        // Each limit can be set.
        var tight = GrammarLimits()
        tight.nesting = 2
        #expect(failure("root ::= ((\"a\"))", limits: tight) == nil)
        #expect(failure("root ::= (((\"a\")))", limits: tight)?.reason == "groups nest more than 2 deep, the most allowed")
        tight.rules = 3
        #expect(failure("root ::= a b\na ::= \"a\"\nb ::= c\nc ::= \"c\"", limits: tight)?.reason == "the grammar has more than 3 rules, the most allowed")
        // A JSON schema is held to the same limits, through the grammar it becomes.
        tight = GrammarLimits()
        tight.rules = 10
        let schema = #"{"type": "object", "properties": {"#
            + (0..<12).map { #""p\#($0)": {"type": "integer"}"# }.joined(separator: ", ") + #"}, "required": ["p0"]}"#
        #expect(throws: GrammarError.self) { try Grammar(.jsonSchema(schema), limits: tight) }
    }

    @Test("a compilation whose caller has gone stops between rules with a cancellation, not a grammar mistake")
    func cancellation() throws {
        var asked = 0
        do {
            _ = try Grammar(.grammar(chain(1_000)), isCancelled: {
                asked += 1
                return asked > 10
            })
            Issue.record("compiled although cancelled")
        } catch {
            #expect(error.isCancellation && asked == 11, "\(error)")
        }
        #expect(try Grammar(.grammar(chain(1_000))).rules.count == 1_002)
    }

    @Test("an ambiguous grammar stops at its per-token step budget, saying why, and allows nothing after", .timeLimit(.minutes(10)))
    func ambiguityBudget() throws {
        // Each "a" may close or open any of 2,000 × 2,000 nested optional repetitions.
        var limits = GrammarLimits()
        limits.stepsPerToken = 2_000_000
        let grammar = try Grammar(gbnf: "root ::= ((\"a\"{0,1000}){0,1000}) \"b\"", limits: limits)
        var matcher = GrammarMatcher(grammar, trie: byteTrie)
        var taken = 0
        while taken < 100, matcher.overrun == nil, matcher.accept(Int32(UInt8(ascii: "a"))) { taken += 1 }
        let overrun = try #require(matcher.overrun, "took \(taken) tokens")
        #expect(overrun.contains("it is too ambiguous"))
        let after = matcher.allowedTokens()
        #expect(after.allSatisfy { $0 == 0 })
        // With the default budget a plain grammar is followed as before.
        #expect(accepts(try Grammar(gbnf: "root ::= (\"a\" | \"b\"){0,2000} \"c\""), String(repeating: "ab", count: 900) + "c") == (true, true))
    }

    /// A seeded generator of adversarial grammar texts: deep nesting, long chains, wide
    /// alternations, huge character classes, left recursion, repetition bounds up to millions.
    struct AdversarialGrammars {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }

        mutating func grammar() -> String {
            let size = [1, 10, 300, 3_000, 30_000][next(5)]
            switch next(8) {
            case 0: return "root ::= " + String(repeating: "(", count: size) + "\"a\"" + String(repeating: ")", count: size)
            case 1: return "root ::= r0\n" + (0..<size).map { "r\($0) ::= r\($0 + 1) \"x\"?\n" }.joined() + "r\(size) ::= [a-z]\n"
            case 2: return "root ::= " + (0..<size).map { "\"w\($0)\"" }.joined(separator: " | ")
            case 3: return "root ::= [" + (0..<min(size, 5_000)).map { "\\U\(String(format: "%08X", 0x1000 + $0 * 7))" }.joined() + "]+"
            case 4: return "root ::= x\nx ::= " + ["x \"a\"", "y x", "\"b\" | x"][next(3)] + "\ny ::= \"\" | \"c\""
            case 5: return "root ::= \"a\"{\(next(3_000_000)),\(["", "\(next(3_000_000))"][next(2)])}"
            case 6: return "root ::= ((\"a\" | \"b\"){0,\(next(2_500))}){0,\(next(2_500))} [^x]*"
            default:
                return "root ::= " + (0..<min(size, 400)).map { _ in ["(", "\"q\"", "[0-9]", "|", ")", "*", "{2,5}", " ", "r"][next(9)] }.joined()
            }
        }
    }

    @Test("1,000 adversarial and mutated grammars and schemas compile or fail with a GrammarError, and are followed without a crash or a stall",
          .timeLimit(.minutes(5)))
    func fuzzer() throws {
        var adversarial = AdversarialGrammars(state: 0x5EED)
        let seeds = [
            "root ::= \"{\" ws pair (\",\" ws pair)* \"}\"\npair ::= [a-z]+ \":\" ws value\nvalue ::= [0-9]{1,5} | \"true\" | root\nws ::= [ \\t\\n]*",
            "root ::= (\"a\" | b){2,40} <[12]> !<[3]>\nb ::= [^\\x00-\\x1F\"] b?",
            ##"{"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 2, "maxItems": 9}}, "$defs": {"n": {"anyOf": [{"type": "integer", "minimum": -5, "maximum": 900}, {"$ref": "#/$defs/n"}]}}}"##,
            #"{"type": "string", "pattern": "^(a|b+){2,7}[x-z]*$"}"#,
        ]
        var mutator = SeededMutator(seeds: seeds.map { Array($0.utf8) }, dictionary: ["((((", "{2000}", "{0,2000}", "::=", "|", "$ref", "[^", "\\U0010FFFF", "*", "root"])
        var outcomes = (compiled: 0, refused: 0, followed: 0)
        for index in 0..<1_000 {
            let text = index.isMultiple(of: 2) ? adversarial.grammar() : String(decoding: mutator.nextInput(), as: UTF8.self)
            let constraint: OutputConstraint = text.hasPrefix("{") ? .jsonSchema(text) : .grammar(text)
            let grammar: Grammar
            do {
                grammar = try Grammar(constraint)
                outcomes.compiled += 1
            } catch {
                #expect(!error.reason.isEmpty)
                outcomes.refused += 1
                continue
            }
            // Follow it for up to 32 bytes of what it allows, drawn by the seed.
            var matcher = GrammarMatcher(grammar, trie: byteTrie)
            for step in 0..<32 {
                let mask = matcher.allowedTokens()
                let allowed = (0..<256).filter { mask[$0 >> 6] & (1 << UInt64($0 & 63)) != 0 }
                guard !allowed.isEmpty else { break }
                let taken = matcher.accept(Int32(allowed[(index + step * 7) % allowed.count]))
                #expect(taken)
            }
            outcomes.followed += 1
        }
        // The corpus reaches both outcomes in numbers (so neither path is vacuous).
        #expect(outcomes.compiled > 200 && outcomes.refused > 200, "\(outcomes)")
    }
}
