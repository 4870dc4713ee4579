import OrderedJSON

/// Reads llama.cpp's GBNF (grammars/README.md in llama.cpp): rules `name ::= alternatives`,
/// literals, character classes, `.`, groups, `* + ? {m} {m,} {m,n}`, comments, and tokens
/// (`<[id]>`, `<text>`, `!` before either for any other token). Repetitions are rewritten into
/// rules as llama.cpp rewrites them. Unlike llama.cpp, which prints a message and drops the
/// grammar, every problem is a `GrammarError` with its line and column, and so is crossing one of
/// the `GrammarLimits` (nesting is bounded, so the recursion over groups is too).
struct GBNFParser {
    /// llama.cpp's limit on repetition counts (`MAX_REPETITION_THRESHOLD`).
    static let repetitionLimit = 2000

    private let text: [UInt8]
    private var position = 0
    private let tokenNamed: ((String) -> Int32?)?
    private let source: String
    private let limits: GrammarLimits
    /// Asked between rules: whether whoever wants the grammar has gone.
    private let isCancelled: () -> Bool
    /// Symbols in the rules so far.
    private var symbolCount = 0

    private var ruleIDs: [String: Int32] = [:]
    private var names: [String] = []
    private var definitions: [[[Grammar.Symbol]]?] = []
    /// Where each rule was defined, or first referred to while undefined.
    private var offsets: [Int] = []
    private var classes: [CharacterClass] = []
    private var classIndex: [CharacterClass: Int32] = [:]

    /// A parser of `text`; `tokenNamed` finds the token a `<text>` element names (without it, only
    /// `<[id]>` tokens parse). `source` names the text in errors; `limits` bound its size;
    /// `isCancelled` is asked between rules, and a yes ends the parse with an error.
    init(_ text: String, source: String = "grammar", tokenNamed: ((String) -> Int32?)? = nil, limits: GrammarLimits = .standard,
         isCancelled: @escaping () -> Bool = { false }) {
        self.text = Array(text.utf8)
        self.tokenNamed = tokenNamed
        self.source = source
        self.limits = limits
        self.isCancelled = isCancelled
    }

    /// The grammar the text defines, starting at its `root` rule.
    mutating func parse() throws(GrammarError) -> Grammar {
        skipSpace(newlines: true)
        while position < text.count {
            guard !isCancelled() else { throw GrammarError.cancelled(source) }
            try parseRule()
        }
        for (index, definition) in definitions.enumerated() where definition == nil {
            throw error(at: offsets[index], "rule \"\(names[index])\" is used but not defined")
        }
        guard let root = ruleIDs["root"] else {
            throw GrammarError(source, at: .whole, "has no rule named root, where the output starts")
        }
        let offsets = self.offsets
        return try Grammar(rules: definitions.map { $0 ?? [] }, ruleNames: names, classes: classes, root: root, source: source,
                           location: { location(of: offsets[$0]) }, limits: limits)
    }

    // MARK: - Rules

    private mutating func parseRule() throws(GrammarError) {
        let start = position
        let name = try parseName()
        let id = try ruleID(name, at: start)
        if definitions[Int(id)] != nil {
            throw error(at: start, "rule \"\(name)\" is defined twice")
        }
        offsets[Int(id)] = start
        skipSpace(newlines: false)
        guard text[position...].starts(with: "::=".utf8) else { throw error(at: position, "expected ::= after the rule name \"\(name)\"") }
        position += 3
        skipSpace(newlines: true)
        definitions[Int(id)] = try parseAlternatives(ruleName: name, depth: 0, at: start)
        if position < text.count {
            if text[position] == UInt8(ascii: "\r") {
                position += position + 1 < text.count && text[position + 1] == UInt8(ascii: "\n") ? 2 : 1
            } else if text[position] == UInt8(ascii: "\n") {
                position += 1
            } else {
                throw error(at: position, "unexpected \(describe(at: position)); expected a symbol, |, or the end of the line")
            }
        }
        skipSpace(newlines: true)
    }

    /// The alternatives of a rule (`depth` 0) or of a group nested `depth` deep, which starts at `start`.
    private mutating func parseAlternatives(ruleName: String, depth: Int, at start: Int) throws(GrammarError) -> [[Grammar.Symbol]] {
        var alternatives = [try parseSequence(ruleName: ruleName, depth: depth)]
        while position < text.count, text[position] == UInt8(ascii: "|") {
            guard alternatives.count < limits.alternatives else {
                throw error(at: start, "\(depth == 0 ? "rule \"\(ruleName)\"" : "this group") has more than \(limits.alternatives) alternatives, the most allowed")
            }
            position += 1
            skipSpace(newlines: true)
            alternatives.append(try parseSequence(ruleName: ruleName, depth: depth))
        }
        return alternatives
    }

    private mutating func parseSequence(ruleName: String, depth: Int) throws(GrammarError) -> [Grammar.Symbol] {
        let nested = depth > 0
        var sequence: [Grammar.Symbol] = []
        // Where the last item (what a repetition applies to) starts in `sequence`; nil before any.
        var lastItem: Int?
        while position < text.count {
            let start = position
            let byte = text[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                lastItem = sequence.count
                while true {
                    guard position < text.count, text[position] != UInt8(ascii: "\n") else { throw error(at: start, "string literal is not closed with \"") }
                    if text[position] == UInt8(ascii: "\"") { break }
                    let code = try parseCharacter()
                    sequence.append(.characters(classID(CharacterClass(single: code))))
                }
                position += 1
            case UInt8(ascii: "["):
                position += 1
                var negated = false
                if position < text.count, text[position] == UInt8(ascii: "^") {
                    negated = true
                    position += 1
                }
                var ranges: [ClosedRange<UInt32>] = []
                while true {
                    guard position < text.count, text[position] != UInt8(ascii: "\n") else { throw error(at: start, "character class is not closed with ]") }
                    if text[position] == UInt8(ascii: "]") { break }
                    let lowOffset = position
                    let low = try parseCharacter()
                    var high = low
                    if position + 1 < text.count, text[position] == UInt8(ascii: "-"), text[position + 1] != UInt8(ascii: "]") {
                        position += 1
                        high = try parseCharacter()
                        guard high >= low else { throw error(at: lowOffset, "range \(Self.show(low))-\(Self.show(high)) is empty: its end comes before its start") }
                    }
                    ranges.append(low...high)
                }
                position += 1
                lastItem = sequence.count
                sequence.append(.characters(classID(CharacterClass(ranges, negated: negated))))
            case UInt8(ascii: "<"), UInt8(ascii: "!"):
                lastItem = sequence.count
                sequence.append(try parseToken())
            case UInt8(ascii: "("):
                guard depth < limits.nesting else { throw error(at: start, "groups nest more than \(limits.nesting) deep, the most allowed") }
                position += 1
                skipSpace(newlines: true)
                let id = try generatedRule(from: ruleName, at: start)
                definitions[Int(id)] = try parseAlternatives(ruleName: ruleName, depth: depth + 1, at: start)
                guard position < text.count, text[position] == UInt8(ascii: ")") else {
                    throw error(at: position < text.count ? position : start, position < text.count ? "expected ) to close the group opened at column \(TextPosition(offset: start, in: text).column)" : "group is not closed with )")
                }
                position += 1
                lastItem = sequence.count
                sequence.append(.rule(id))
            case UInt8(ascii: "."):
                position += 1
                lastItem = sequence.count
                sequence.append(.characters(classID(.any)))
            case UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "?"):
                position += 1
                guard let item = lastItem else { throw error(at: start, "\(Character(UnicodeScalar(byte))) has nothing before it to repeat") }
                let (minimum, maximum): (Int, Int?) = byte == UInt8(ascii: "*") ? (0, nil) : byte == UInt8(ascii: "+") ? (1, nil) : (0, 1)
                try repeatLast(&sequence, from: item, minimum: minimum, maximum: maximum, ruleName: ruleName, at: start)
                lastItem = nil
            case UInt8(ascii: "{"):
                position += 1
                guard let item = lastItem else { throw error(at: start, "{ has nothing before it to repeat") }
                skipSpace(newlines: nested)
                let minimum = try parseCount()
                skipSpace(newlines: nested)
                var maximum: Int? = minimum
                guard position < text.count else { throw error(at: start, "repetition is not closed with }") }
                if text[position] == UInt8(ascii: ",") {
                    position += 1
                    skipSpace(newlines: nested)
                    maximum = position < text.count && Self.isDigit(text[position]) ? try parseCount() : nil
                    skipSpace(newlines: nested)
                }
                guard position < text.count, text[position] == UInt8(ascii: "}") else { throw error(at: position < text.count ? position : start, "expected } to close the repetition") }
                position += 1
                if let maximum, maximum < minimum { throw error(at: start, "repetition {\(minimum),\(maximum)} has its maximum below its minimum") }
                guard minimum <= Self.repetitionLimit else { throw error(at: start, "repetition count \(minimum) is above \(Self.repetitionLimit)") }
                try repeatLast(&sequence, from: item, minimum: minimum, maximum: maximum.flatMap { $0 > Self.repetitionLimit ? nil : $0 },
                               ruleName: ruleName, at: start)
                lastItem = nil
            default:
                guard Self.isWordCharacter(byte) else { return try counted(sequence, at: start) }
                let name = try parseName()
                lastItem = sequence.count
                sequence.append(.rule(try ruleID(name, at: start)))
            }
            skipSpace(newlines: nested)
        }
        return try counted(sequence, at: position)
    }

    /// `sequence`, counted against the limit on symbols (`offset`: where it ends).
    private mutating func counted(_ sequence: [Grammar.Symbol], at offset: Int) throws(GrammarError) -> [Grammar.Symbol] {
        symbolCount += sequence.count
        try checkSymbols(at: offset)
        return sequence
    }

    private func checkSymbols(at offset: Int, adding extra: Int = 0) throws(GrammarError) {
        guard symbolCount + extra <= limits.symbols else {
            throw error(at: offset, "the grammar grows past \(limits.symbols) symbols, the most allowed (repetitions count each copy)")
        }
    }

    /// Rewrites the item at `sequence[item...]` repeated `minimum` to `maximum` (nil: unbounded)
    /// times as llama.cpp does: `S{m,n}` is m copies of S, then n-m nested optional rules
    /// `S' ::= S S'' |`; `S{m,}` is m copies then `S' ::= S S' |`.
    private mutating func repeatLast(_ sequence: inout [Grammar.Symbol], from item: Int, minimum: Int, maximum: Int?, ruleName: String,
                                     at offset: Int) throws(GrammarError) {
        let repeated = Array(sequence[item...])
        let optional = maximum.map { $0 - minimum } ?? 1
        guard names.count + optional <= limits.rules else {
            throw error(at: offset, "repetition makes the grammar more than \(limits.rules) rules, the most allowed; use smaller counts")
        }
        // The copies in this sequence and in the optional rules, beyond what `sequence` already counts.
        try checkSymbols(at: offset, adding: sequence.count + repeated.count * (max(0, minimum - 1) + optional))
        symbolCount += repeated.count * optional
        if minimum == 0 {
            sequence.removeSubrange(item...)
        } else {
            for _ in 1..<minimum { sequence += repeated }
        }
        var previous: Int32 = 0
        for index in 0..<optional {
            let id = try generatedRule(from: ruleName, at: offset)
            var alternative = repeated
            if maximum == nil { alternative.append(.rule(id)) } else if index > 0 { alternative.append(.rule(previous)) }
            definitions[Int(id)] = [alternative, []]
            previous = id
        }
        if optional > 0 { sequence.append(.rule(previous)) }
    }

    // MARK: - Terminals

    /// One character of a literal or class: an escape or a UTF-8 encoded scalar.
    private mutating func parseCharacter() throws(GrammarError) -> UInt32 {
        let start = position
        let byte = text[position]
        guard byte == UInt8(ascii: "\\") else {
            let end = scalarEnd(at: position)
            let scalar = String(decoding: text[position..<end], as: UTF8.self).unicodeScalars.first!
            position = end
            return scalar.value
        }
        guard position + 1 < text.count else { throw error(at: start, "escape \\ at the end of the text") }
        let escaped = text[position + 1]
        position += 2
        switch escaped {
        case UInt8(ascii: "x"): return try parseHex(digits: 2, escapeAt: start)
        case UInt8(ascii: "u"): return try parseHex(digits: 4, escapeAt: start)
        case UInt8(ascii: "U"): return try parseHex(digits: 8, escapeAt: start)
        case UInt8(ascii: "t"): return 9
        case UInt8(ascii: "r"): return 13
        case UInt8(ascii: "n"): return 10
        case UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "-"): return UInt32(escaped)
        default: throw error(at: start, "unknown escape \\\(describeByte(escaped)) (known: \\n \\r \\t \\\\ \\\" \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH)")
        }
    }

    private mutating func parseHex(digits: Int, escapeAt start: Int) throws(GrammarError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard position < text.count, let digit = Self.hexValue(text[position]) else {
                throw error(at: start, "escape \\\(describeByte(text[start + 1])) needs \(digits) hexadecimal digits")
            }
            value = value << 4 | digit
            position += 1
        }
        guard value <= CharacterClass.maximum else { throw error(at: start, "code point \(Self.show(value)) is beyond Unicode's last, U+10FFFF") }
        return value
    }

    /// A token element: `<[id]>` or `<text>` (one token's text), after an optional `!`.
    private mutating func parseToken() throws(GrammarError) -> Grammar.Symbol {
        let start = position
        let negated = text[position] == UInt8(ascii: "!")
        if negated {
            position += 1
            guard position < text.count, text[position] == UInt8(ascii: "<") else { throw error(at: start, "! must be followed by a token, as !<[id]> or !<text>") }
        }
        position += 1
        let id: Int32
        if position < text.count, text[position] == UInt8(ascii: "[") {
            position += 1
            let digitsStart = position
            while position < text.count, Self.isDigit(text[position]) { position += 1 }
            guard position > digitsStart, let value = Int32(String(decoding: text[digitsStart..<position], as: UTF8.self)) else {
                throw error(at: digitsStart, "expected a token id (a number) in <[...]>")
            }
            guard position + 1 < text.count, text[position] == UInt8(ascii: "]"), text[position + 1] == UInt8(ascii: ">") else {
                throw error(at: position, "expected ]> to close the token <[\(value)")
            }
            position += 2
            id = value
        } else {
            let nameStart = position
            while position < text.count, text[position] != UInt8(ascii: ">"), text[position] != UInt8(ascii: "\n") { position += 1 }
            guard position < text.count, text[position] == UInt8(ascii: ">") else { throw error(at: start, "token is not closed with >") }
            let name = "<" + String(decoding: text[nameStart..<position], as: UTF8.self) + ">"
            position += 1
            guard let tokenNamed else { throw error(at: start, "token \(name) can only be named with a model's vocabulary; use its id, <[id]>") }
            guard let found = tokenNamed(name) else { throw error(at: start, "\(name) is not a single token of the model's vocabulary") }
            id = found
        }
        return negated ? .anyTokenExcept(id) : .token(id)
    }

    private mutating func parseName() throws(GrammarError) -> String {
        let start = position
        while position < text.count, Self.isWordCharacter(text[position]) { position += 1 }
        guard position > start else {
            throw error(at: start, "expected a rule name (letters, digits and -), found \(describe(at: start))")
        }
        return String(decoding: text[start..<position], as: UTF8.self)
    }

    private mutating func parseCount() throws(GrammarError) -> Int {
        let start = position
        while position < text.count, Self.isDigit(text[position]) { position += 1 }
        guard position > start else { throw error(at: start, "expected a number in the repetition, found \(describe(at: start))") }
        guard let count = Int(String(decoding: text[start..<position], as: UTF8.self)) else { throw error(at: start, "repetition count is too large") }
        return count
    }

    /// Skips blanks and comments, and line breaks when `newlines`.
    private mutating func skipSpace(newlines: Bool) {
        while position < text.count {
            switch text[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"): position += 1
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                guard newlines else { return }
                position += 1
            case UInt8(ascii: "#"):
                while position < text.count, text[position] != UInt8(ascii: "\n"), text[position] != UInt8(ascii: "\r") { position += 1 }
            default: return
            }
        }
    }

    // MARK: - Tables

    private mutating func ruleID(_ name: String, at offset: Int) throws(GrammarError) -> Int32 {
        if let id = ruleIDs[name] { return id }
        guard names.count < limits.rules else { throw error(at: offset, "the grammar has more than \(limits.rules) rules, the most allowed") }
        let id = Int32(names.count)
        ruleIDs[name] = id
        names.append(name)
        definitions.append(nil)
        offsets.append(offset)
        return id
    }

    /// A new rule for a group or repetition in rule `name` (`name_7`, as llama.cpp names them).
    private mutating func generatedRule(from name: String, at offset: Int) throws(GrammarError) -> Int32 {
        var candidate = "\(name)_\(names.count)"
        while ruleIDs[candidate] != nil { candidate += "_" }
        let id = try ruleID(candidate, at: offset)
        definitions[Int(id)] = []
        return id
    }

    private mutating func classID(_ characterClass: CharacterClass) -> Int32 {
        if let id = classIndex[characterClass] { return id }
        let id = Int32(classes.count)
        classes.append(characterClass)
        classIndex[characterClass] = id
        return id
    }

    // MARK: - Errors

    private func location(of offset: Int) -> GrammarError.Location {
        let place = TextPosition(offset: offset, in: text)
        return .text(line: place.line, column: place.column)
    }

    private func error(at offset: Int, _ reason: String) -> GrammarError {
        GrammarError(source, at: location(of: offset), reason)
    }

    private func describe(at offset: Int) -> String {
        guard offset < text.count else { return "the end of the text" }
        return "'\(String(decoding: text[offset..<scalarEnd(at: offset)], as: UTF8.self))'"
    }

    /// Where the character starting at `offset` ends (the text is valid UTF-8: it was a String).
    private func scalarEnd(at offset: Int) -> Int {
        let byte = text[offset]
        return min(text.count, offset + (byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4))
    }

    private func describeByte(_ byte: UInt8) -> String {
        String(decoding: [byte], as: UTF8.self)
    }

    static func show(_ code: UInt32) -> String {
        let hex = String(code, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 97 && byte | 0x20 <= 122) || byte == UInt8(ascii: "-")
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 48...57: UInt32(byte - 48)
        case 65...70: UInt32(byte - 55)
        case 97...102: UInt32(byte - 87)
        default: nil
        }
    }
}

extension Grammar {
    /// The grammar of llama.cpp GBNF `text`. `tokenNamed` finds the token a `<text>` element
    /// names; without it only `<[id]>` tokens parse. `limits` bound its size.
    ///
    /// - Throws: `GrammarError` with the line and column of the first problem or crossed limit.
    public init(gbnf text: String, tokenNamed: ((String) -> Int32?)? = nil, limits: GrammarLimits = .standard) throws(GrammarError) {
        try self.init(.grammar(text), tokenNamed: tokenNamed, limits: limits)
    }
}
