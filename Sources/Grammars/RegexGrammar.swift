import PythonText

/// A regular expression written as a GBNF expression: literals, `.`, classes (`[a-z]`, `[^…]`,
/// `\d \w \s` and their negations), groups (capturing, `(?:…)`, named), alternation, and the
/// quantifiers `* + ? {n} {n,} {n,m}` (lazy ones read as greedy: a grammar has no preference).
/// Anchors are accepted at the very start and end. Back-references, look-arounds and word
/// boundaries, which no context-free grammar can express, are errors with their column.
///
/// Inside a JSON string (`jsonString`), the text is what goes between the quotes: characters a
/// JSON string must escape are written escaped, and classes leave out `"`, `\` and control
/// characters.
struct RegexGrammar {
    private let scalars: [UnicodeScalar]
    private var position = 0
    private let jsonString: Bool
    private let source: String

    /// The code points allowed unescaped in a JSON string.
    static let jsonCharacters = CharacterClass([0x22...0x22, 0x5C...0x5C, 0...0x1F, 0x7F...0x7F], negated: true)

    /// A converter of `pattern`; `source` names it in errors.
    init(_ pattern: String, jsonString: Bool = false, source: String = "regex") {
        scalars = Array(pattern.unicodeScalars)
        self.jsonString = jsonString
        self.source = source
    }

    /// The GBNF expression matching what the pattern matches as a whole, and whether it was
    /// anchored at its start and end.
    mutating func expression() throws(GrammarError) -> (gbnf: String, anchoredStart: Bool, anchoredEnd: Bool) {
        let anchoredStart = scalars.first == "^"
        if anchoredStart { position = 1 }
        let body = try alternation(depth: 0)
        var anchoredEnd = false
        if position < scalars.count, scalars[position] == "$", position == scalars.count - 1 {
            anchoredEnd = true
            position += 1
        }
        guard position == scalars.count else {
            throw error(scalars[position] == ")" ? "unbalanced )" : scalars[position] == "$" ? "$ is supported only at the end" : "unexpected \(scalars[position])")
        }
        return (body, anchoredStart, anchoredEnd)
    }

    private func error(_ reason: String, at offset: Int? = nil) -> GrammarError {
        GrammarError(source, at: .text(line: 1, column: (offset ?? position) + 1), reason)
    }

    private mutating func alternation(depth: Int) throws(GrammarError) -> String {
        guard depth < 100 else { throw error("groups nested too deeply") }
        var alternatives = [try sequence(depth: depth)]
        while position < scalars.count, scalars[position] == "|" {
            position += 1
            alternatives.append(try sequence(depth: depth))
        }
        return alternatives.count == 1 ? alternatives[0] : "(" + alternatives.map { $0.isEmpty ? "\"\"" : $0 }.joined(separator: " | ") + ")"
    }

    private mutating func sequence(depth: Int) throws(GrammarError) -> String {
        var items: [String] = []
        while position < scalars.count {
            let scalar = scalars[position]
            if scalar == "|" || scalar == ")" { break }
            if scalar == "$" {
                if position == scalars.count - 1 { break }
                throw error("$ is supported only at the end")
            }
            if scalar == "^" { throw error("^ is supported only at the start") }
            var atom = try self.atom(depth: depth)
            atom = try quantified(atom)
            items.append(atom)
        }
        return items.joined(separator: " ")
    }

    private mutating func atom(depth: Int) throws(GrammarError) -> String {
        let start = position
        let scalar = scalars[position]
        position += 1
        switch scalar {
        case "(":
            if position < scalars.count, scalars[position] == "?" {
                let rest = String(String.UnicodeScalarView(scalars[position...].prefix(3)))
                if rest.hasPrefix("?:") {
                    position += 2
                } else if rest.hasPrefix("?P<") || (rest.hasPrefix("?<") && !rest.hasPrefix("?<=") && !rest.hasPrefix("?<!")) {
                    while position < scalars.count, scalars[position] != ">" { position += 1 }
                    position += 1
                } else {
                    throw error("look-arounds and other (?…) groups are not supported (a grammar cannot look ahead or behind)", at: start)
                }
            }
            let inner = try alternation(depth: depth + 1)
            guard position < scalars.count, scalars[position] == ")" else { throw error("group is not closed with )", at: start) }
            position += 1
            return "(" + (inner.isEmpty ? "\"\"" : inner) + ")"
        case "[":
            return try characterClass(openedAt: start)
        case ".":
            return try classText(CharacterClass([0x0A...0x0A], negated: true), at: start)
        case "\\":
            return try escape(openedAt: start)
        case "*", "+", "?", "{":
            throw error("\(scalar) has nothing before it to repeat", at: start)
        default:
            return literal(scalar.value)
        }
    }

    /// A literal code point; in a JSON string, written as the string must hold it.
    private func literal(_ code: UInt32) -> String {
        guard jsonString else { return GBNFText.literal(String(UnicodeScalar(code)!)) }
        let json = PythonText.json(String(UnicodeScalar(code)!), ensureASCII: false)
        return GBNFText.literal(String(json.dropFirst().dropLast()))
    }

    /// A class as GBNF; in a JSON string, without the characters it must escape.
    private func classText(_ characterClass: CharacterClass, at offset: Int) throws(GrammarError) -> String {
        var allowed = characterClass
        if jsonString {
            allowed = CharacterClass(characterClass.ranges.flatMap { range in
                Self.jsonCharacters.ranges.compactMap { json in
                    let low = max(range.lowerBound, json.lowerBound), high = min(range.upperBound, json.upperBound)
                    return low <= high ? low...high : nil
                }
            })
        }
        guard let text = GBNFText.characterClass(allowed) else { throw error("class matches no character\(jsonString ? " allowed unescaped in a JSON string" : "")", at: offset) }
        return text
    }

    /// The code points of `\d \w \s` (and their capitals, negated), or nil for another letter.
    private static func shorthand(_ letter: UnicodeScalar) -> CharacterClass? {
        let ranges: [ClosedRange<UInt32>]
        switch letter {
        case "d", "D": ranges = [0x30...0x39]
        case "w", "W": ranges = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
        case "s", "S": ranges = [0x20...0x20, 0x09...0x0D]
        default: return nil
        }
        return CharacterClass(ranges, negated: letter.properties.isUppercase)
    }

    private mutating func escape(openedAt start: Int) throws(GrammarError) -> String {
        guard position < scalars.count else { throw error("\\ at the end of the pattern", at: start) }
        let letter = scalars[position]
        position += 1
        if let shorthand = Self.shorthand(letter) { return try classText(shorthand, at: start) }
        return literal(try escapedCode(letter, at: start))
    }

    /// The code point of an escape other than a class shorthand.
    private mutating func escapedCode(_ letter: UnicodeScalar, at start: Int) throws(GrammarError) -> UInt32 {
        switch letter {
        case "n": return 0x0A
        case "r": return 0x0D
        case "t": return 0x09
        case "f": return 0x0C
        case "v": return 0x0B
        case "0": return 0
        case "x", "u":
            let digits = letter == "x" ? 2 : 4
            guard position + digits <= scalars.count,
                  let code = UInt32(String(String.UnicodeScalarView(scalars[position..<position + digits])), radix: 16) else {
                throw error("\\\(letter) needs \(digits) hexadecimal digits", at: start)
            }
            position += digits
            return code
        case "b", "B": throw error("word boundaries (\\\(letter)) are not supported", at: start)
        case "p", "P": throw error("Unicode properties (\\\(letter){…}) are not supported", at: start)
        case "1"..."9", "k": throw error("back-references are not supported (a grammar cannot repeat what was matched)", at: start)
        default:
            guard !letter.properties.isAlphabetic else { throw error("unknown escape \\\(letter)", at: start) }
            return letter.value
        }
    }

    private mutating func characterClass(openedAt start: Int) throws(GrammarError) -> String {
        var negated = false
        if position < scalars.count, scalars[position] == "^" {
            negated = true
            position += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        var first = true
        while true {
            guard position < scalars.count else { throw error("class is not closed with ]", at: start) }
            let scalar = scalars[position]
            if scalar == "]", !first { break }
            first = false
            let memberStart = position
            position += 1
            let low: UInt32
            if scalar == "\\" {
                guard position < scalars.count else { throw error("class is not closed with ]", at: start) }
                let letter = scalars[position]
                position += 1
                if let shorthand = Self.shorthand(letter) {
                    ranges += shorthand.ranges
                    continue
                }
                low = letter == "b" ? 0x08 : try escapedCode(letter, at: memberStart)
            } else {
                low = scalar.value
            }
            if position + 1 < scalars.count, scalars[position] == "-", scalars[position + 1] != "]" {
                position += 1
                var high = scalars[position].value
                position += 1
                if high == 0x5C {
                    guard position < scalars.count else { throw error("class is not closed with ]", at: start) }
                    let letter = scalars[position]
                    position += 1
                    high = try escapedCode(letter, at: memberStart)
                }
                guard high >= low else { throw error("range is empty: its end comes before its start", at: memberStart) }
                ranges.append(low...high)
            } else {
                ranges.append(low...low)
            }
        }
        position += 1
        return try classText(CharacterClass(ranges, negated: negated), at: start)
    }

    private mutating func quantified(_ atom: String) throws(GrammarError) -> String {
        guard position < scalars.count else { return atom }
        let start = position
        var suffix: String
        switch scalars[position] {
        case "*", "+", "?":
            suffix = String(scalars[position])
            position += 1
        case "{":
            position += 1
            func number() -> Int? {
                let from = position
                while position < scalars.count, ("0"..."9").contains(scalars[position]) { position += 1 }
                return position > from ? Int(String(String.UnicodeScalarView(scalars[from..<position]))) : nil
            }
            guard let minimum = number() else { throw error("expected a count in {…}", at: start) }
            var maximum: Int? = minimum
            if position < scalars.count, scalars[position] == "," {
                position += 1
                maximum = number()
            }
            guard position < scalars.count, scalars[position] == "}" else { throw error("repetition is not closed with }", at: start) }
            position += 1
            if let maximum, maximum < minimum { throw error("repetition {\(minimum),\(maximum)} has its maximum below its minimum", at: start) }
            suffix = maximum == minimum ? "{\(minimum)}" : "{\(minimum),\(maximum.map(String.init) ?? "")}"
        default:
            return atom
        }
        // Lazy (`*?`) and possessive (`*+`) forms match the same strings.
        if position < scalars.count, scalars[position] == "?" || scalars[position] == "+" { position += 1 }
        if position < scalars.count, ["*", "+", "?", "{"].contains(scalars[position]) {
            throw error("\(scalars[position]) has nothing before it to repeat")
        }
        return atom + suffix
    }
}
