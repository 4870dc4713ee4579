import Foundation
import GenerationTypes
import Testing
@testable import Grammars

/// The converters' grammars accept exactly what their sources describe: integer ranges checked
/// against arithmetic, regular expressions against Foundation's NSRegularExpression, choices
/// against the list; their mistakes are located.
@Suite struct ConverterTests {
    private func grammar(_ constraint: OutputConstraint) throws -> Grammar {
        try Grammar(constraint)
    }

    private func failure(_ constraint: OutputConstraint) -> GrammarError? {
        do {
            _ = try Grammar(constraint)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [(-150, 150), (0, 9), (7, 7), (10, 99), (95, 1205), (-1205, -95), (-3, 12), (0, 100_000)])
    func integerRanges(low: Int, high: Int) throws {
        let schema = "{\"type\": \"integer\", \"minimum\": \(low), \"maximum\": \(high)}"
        let rules = try grammar(.jsonSchema(schema))
        var candidates = Array(stride(from: low - 30, through: high + 30, by: max(1, (high - low) / 400)))
        candidates += [low - 1, low, high, high + 1, 0, -0, 100, 1000, 99_999, 100_001]
        for value in candidates {
            #expect(accepts(rules, String(value)).accepted == (low...high).contains(value), "\(value) in \(low)…\(high)")
        }
        #expect(!accepts(rules, "007").accepted && !accepts(rules, "-0").accepted)
    }

    @Test func exclusiveBoundsAndOpenRanges() throws {
        let above = try grammar(.jsonSchema(#"{"type": "integer", "exclusiveMinimum": 5}"#))
        for value in [4, 5, 6, 60, 1_000_000, -7] { #expect(accepts(above, String(value)).accepted == (value > 5), "\(value)") }
        let below = try grammar(.jsonSchema(#"{"type": "integer", "exclusiveMaximum": -2.5}"#))
        for value in [-2, -3, -30, 0, 7] { #expect(accepts(below, String(value)).accepted == (value < -2), "\(value)") }
    }

    /// Number ranges against Foundation's decimal arithmetic: every number from below the low
    /// bound to above the high one in steps of 0.005 (and each bound's neighbours), as its
    /// shortest decimal spelling.
    @Test(arguments: [
        (#"{"type": "number", "minimum": -1.5, "maximum": 2.25}"#, "-1.5", false, "2.25", false),
        (#"{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}"#, "0", true, "1", true),
        (#"{"type": "number", "minimum": 1e-3, "maximum": 0.125}"#, "0.001", false, "0.125", false),
        (#"{"type": "number", "minimum": -0.75, "exclusiveMaximum": -0.25}"#, "-0.75", false, "-0.25", true),
        (#"{"type": "number", "minimum": 3, "maximum": 3}"#, "3", false, "3", false),
        (#"{"type": "number", "minimum": 9.95, "maximum": 10.5, "exclusiveMinimum": 9.95}"#, "9.95", true, "10.5", false),
    ])
    func numberRanges(schema: String, low: String, lowExclusive: Bool, high: String, highExclusive: Bool) throws {
        let rules = try grammar(.jsonSchema(schema))
        let (lowValue, highValue) = (try #require(Decimal(string: low)), try #require(Decimal(string: high)))
        func inRange(_ value: Decimal) -> Bool {
            (lowExclusive ? value > lowValue : value >= lowValue) && (highExclusive ? value < highValue : value <= highValue)
        }
        let step = Decimal(string: "0.005")!, tiny = Decimal(string: "0.0001")!
        var candidates = [lowValue - tiny, lowValue, lowValue + tiny, highValue - tiny, highValue, highValue + tiny, 0, 1, -1, 100]
        var value = lowValue - 1
        while value <= highValue + 1 {
            candidates.append(value)
            value += step
        }
        for candidate in candidates {
            let text = "\(candidate)"
            #expect(accepts(rules, text).accepted == inRange(candidate), "\(text) in \(schema)")
        }
    }

    @Test func openNumberRanges() throws {
        let above = try grammar(.jsonSchema(#"{"type": "number", "minimum": 0.5}"#))
        for text in ["0.5", "0.50001", "0.49", "7", "123456.75", "-1", "0"] {
            #expect(accepts(above, text).accepted == (Decimal(string: text)! >= Decimal(string: "0.5")!), "\(text)")
        }
        let below = try grammar(.jsonSchema(#"{"type": "number", "exclusiveMaximum": -2.5}"#))
        for text in ["-2.5", "-2.50001", "-3", "-1000.125", "0", "-2.4"] {
            #expect(accepts(below, text).accepted == (Decimal(string: text)! < Decimal(string: "-2.5")!), "\(text)")
        }
        // Bounded numbers are written without an exponent.
        #expect(!accepts(above, "1e3").accepted)
    }

    /// Patterns and strings, full-match verdicts from NSRegularExpression.
    @Test(arguments: [
        (#"[a-c]+x?"#, ["a", "abcx", "x", "", "abcxx", "cab"]),
        (#"\(\d{3}\) \d{3}-\d{4}"#, ["(555) 123-4567", "555-123-4567", "(55) 123-4567", "(555) 123-45678"]),
        (#"^(?:yes|no|maybe)$"#, ["yes", "no", "maybe", "yesno", ""]),
        (#"(ab|c){2,3}\.?"#, ["abc", "cc.", "ababab", "c", "abcabc"]),
        (#"[^\s,]+(, [^\s,]+)*"#, ["a, b, c", "one", "a,b", "a , b"]),
        (#"\w+@\w+\.(com|org)"#, ["me@x.com", "a_b@c.org", "me@x.net", "@x.com"]),
        (#"é+[α-ω]{1,2}"#, ["éα", "ééωψ", "e α", "éαβγ"]),
        (#"a.c"#, ["abc", "a\nc", "a😀c", "ac"]),
        (#"[-a\]]+"#, ["-a]", "a-", "b"]),
        (#"x*?y+?z"#, ["z", "xxyz", "yyz", "x"]),
    ])
    func regexAgreesWithFoundation(pattern: String, texts: [String]) throws {
        let rules = try grammar(.regex(pattern))
        let regex = try NSRegularExpression(pattern: pattern)
        for text in texts {
            let range = NSRange(text.startIndex..., in: text)
            let expected = regex.firstMatch(in: text, options: [.anchored], range: range).map { $0.range == range } ?? false
            #expect(accepts(rules, text).accepted == expected, "\(pattern) on \(text.debugDescription)")
        }
    }

    @Test(arguments: [
        (#"a(?=b)"#, 2, "look-arounds"),
        (#"(a)\1"#, 4, "back-references"),
        (#"a\bc"#, 2, "word boundaries"),
        (#"a{3,1}"#, 2, "maximum below its minimum"),
        (#"(ab"#, 1, "group is not closed"),
        (#"ab)"#, 3, "unbalanced )"),
        (#"a^b"#, 2, "^ is supported only at the start"),
        (#"*a"#, 1, "nothing before it to repeat"),
        (#"[z-a]"#, 2, "range is empty"),
    ])
    func regexMistakesAreLocated(pattern: String, column: Int, reason: String) throws {
        let error = try #require(failure(.regex(pattern)))
        #expect(error.location == .text(line: 1, column: column), "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
    }

    @Test func choicesAreExact() throws {
        let rules = try grammar(.choice(["Paris", "Par", "\"quoted\"\n", "日本"]))
        for text in ["Paris", "Par", "\"quoted\"\n", "日本"] { #expect(accepts(rules, text).accepted, "\(text)") }
        for text in ["Pari", "paris", "Paris ", "日", ""] { #expect(!accepts(rules, text).accepted, "\(text)") }
        #expect(failure(.choice([]))?.description == "choice: needs at least one string to choose from")
    }

    @Test(arguments: [
        (#"{"type": "object", "properties": {"a": {"type": "string", "uniqueItems": true}}}"#, "/properties/a/uniqueItems", "keyword \"uniqueItems\" is not supported"),
        (#"{"type": "strin"}"#, "/type", "unknown type \"strin\""),
        (##"{"$ref": "#/$defs/missing"}"##, "/$ref", "points to nothing"),
        (#"{"type": "array", "minItems": 3, "maxItems": 2}"#, "/maxItems", "below minItems"),
        (#"{"type": "number", "exclusiveMinimum": 3, "maximum": 3}"#, "", "no number lies between the bounds"),
        (#"{"allOf": [{"type": "string"}, {"maxLength": 3}]}"#, "/allOf", "one schema only"),
        (#"{"type": "object", "properties": {"a": {}}, "required": ["b"], "additionalProperties": false}"#, "/required", "\"b\" is required"),
        (#"false"#, "", "accepts nothing"),
    ])
    func schemaMistakesNameTheirPlace(schema: String, pointer: String, reason: String) throws {
        let error = try #require(failure(.jsonSchema(schema)))
        #expect(error.location == .schema(pointer: pointer), "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
    }

    @Test func schemaSyntaxErrorsHaveLineAndColumn() throws {
        let error = try #require(failure(.jsonSchema("{\n  \"type\": \"object\",\n  \"properties\": {\"a\" 1}\n}")))
        #expect(error.location == .text(line: 3, column: 22), "\(error)")
        #expect(error.description == "JSON schema, line 3, column 22: expected : after the member name \"a\"")
    }

    /// Objects: required members always, optional ones in any in-order subset, in the schema's
    /// order; recursive references; tuples.
    @Test func objectsAndReferences() throws {
        let schema = #"""
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}, "c": {"$ref": "#/$defs/node"}},
         "required": ["b"],
         "$defs": {"node": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}, "required": ["next"]}}}
        """#
        let rules = try grammar(.jsonSchema(schema))
        for text in [#"{"b": true}"#, #"{"a": 1, "b": false}"#, #"{"b":true,"c":{"next":null}}"#, #"{"a":-3,"b":true,"c":{"next":{"next":null}}}"#] {
            #expect(accepts(rules, text).accepted, "\(text)")
        }
        for text in [#"{}"#, #"{"a": 1}"#, #"{"b": true, "a": 1}"#, #"{"b": true,}"#, #"{"b": true, "d": 1}"#, #"{"b":true,"c":{}}"#] {
            #expect(!accepts(rules, text).accepted, "\(text)")
        }
        let tuple = try grammar(.jsonSchema(#"{"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false, "minItems": 1}"#))
        for (text, valid) in [(#"["a", 1]"#, true), (#"["a"]"#, true), (#"[]"#, false), (#"["a", 1, 2]"#, false), (#"[1]"#, false)] {
            #expect(accepts(tuple, text).accepted == valid, "\(text)")
        }
    }
}
