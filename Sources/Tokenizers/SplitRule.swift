/// One of the regular expressions llama.cpp splits text with before byte-pair encoding, written
/// as a matcher at a position. Each case documents the expression it stands for; the GPT-2 and
/// Llama 3 cases follow llama.cpp's hand-written splitters, the others `std::regex` semantics
/// (leftmost match, alternatives in order).
enum SplitRule: Sendable {
    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
    case gpt2
    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
    /// with `marksAreLetters`, `[\p{L}\p{M}]` in place of `\p{L}` (Qwen3.5's
    /// `[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+` and ` ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*`)
    case llama3(maxDigits: Int, marksAreLetters: Bool = false)
    /// GPT-4o's (o200k's), as llama.cpp runs it — `std::regex` over its collapsed text, where every
    /// letter beyond ASCII is one code that is neither `[a-z]` nor `[A-Z]`, so it counts as upper
    /// and lower case alike:
    /// `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?`
    /// `|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:…)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    case gpt4o
    /// `\p{N}{1,maxRun}` (`\p{N}+` for `Int.max`)
    case numbers(maxRun: Int)
    /// `[\r\n]`
    case lineBreak
    /// `[^\n]+|[\n]+`: runs of line feeds, and runs of everything else
    case lineFeedRuns
    /// `\s?[set]+`
    case optionalSpaceThenRun(CodepointSet)
    /// `[set]+`
    case run(CodepointSet)
    /// `\s+$`
    case trailingWhitespace
    /// `[0-9][0-9][0-9]`
    case asciiDigitTriple

    /// The length of the match at `position` (> 0), or, when there is none, minus the number of
    /// positions from here that cannot start one either (≤ 0, meaning at least one).
    func match(_ text: UnsafeBufferPointer<UInt32>, at position: Int, end: Int) -> Int {
        @inline(__always) func codepoint(_ index: Int) -> UInt32 { index < end ? text[index] : 0xFFFF_FFFF }
        @inline(__always) func flags(_ index: Int) -> CodepointClass { index < end ? CodepointClass.of(text[index]) : [] }
        @inline(__always) func isSpace(_ index: Int) -> Bool { flags(index).contains(.whitespace) }
        @inline(__always) func isLineBreak(_ index: Int) -> Bool { codepoint(index) == 0x0A || codepoint(index) == 0x0D }
        // What `\p{L}` stands for: letters, and accent marks too where the expression says so.
        let letters: CodepointClass = if case .llama3(_, true) = self { [.letter, .accentMark] } else { .letter }
        @inline(__always) func isLetter(_ index: Int) -> Bool { !flags(index).isDisjoint(with: letters) }
        @inline(__always) func isOther(_ index: Int) -> Bool {
            let found = flags(index)
            return found.isDisjoint(with: letters.union([.whitespace, .number])) && !found.isEmpty
        }
        // The expressions' last alternatives: `\s*[\r\n]+` (with `untilLastLineBreak`), then
        // `\s+(?!\S)|\s+`, at least one position when nothing matches.
        func whitespace(untilLastLineBreak: Bool) -> Int {
            var spaces = 0
            var afterLastLineBreak = 0
            while isSpace(position + spaces) {
                if isLineBreak(position + spaces) { afterLastLineBreak = position + spaces + 1 }
                spaces += 1
            }
            if untilLastLineBreak, afterLastLineBreak > 0 { return afterLastLineBreak - position }
            if spaces > 1, position + spaces < end { return spaces - 1 }
            return max(spaces, 1)
        }

        switch self {
        case .gpt2, .llama3:
            let current = codepoint(position)
            let currentFlags = flags(position)
            if let contraction = contractionLength(text, at: position, end: end, ignoringCase: isLlama3) {
                return contraction
            }
            if case .llama3(let maxDigits, _) = self {
                if !(isLineBreak(position) || currentFlags.contains(.number)),
                   isLetter(position) || isLetter(position + 1) {
                    var index = position + 1
                    while isLetter(index) { index += 1 }
                    return index - position
                }
                if currentFlags.contains(.number) {
                    var index = position
                    while index - position < maxDigits, flags(index).contains(.number) { index += 1 }
                    return index - position
                }
            }
            let leadingSpace = current == 0x20 ? 1 : 0
            let nextFlags = leadingSpace == 1 ? flags(position + 1) : currentFlags
            if case .gpt2 = self {
                for wanted in [CodepointClass.letter, .number] where nextFlags.contains(wanted) {
                    var index = position + leadingSpace
                    while flags(index).contains(wanted) { index += 1 }
                    return index - position
                }
            }
            let anchorFlags = isLlama3 ? currentFlags : nextFlags
            if nextFlags.isDisjoint(with: letters.union([.whitespace, .number])), !anchorFlags.isEmpty {
                var index = position + leadingSpace
                while isOther(index) { index += 1 }
                if isLlama3 { while isLineBreak(index) { index += 1 } }
                return index - position
            }
            return whitespace(untilLastLineBreak: isLlama3)

        case .gpt4o:
            // A letter that is not lower case ASCII (the regex's "upper"), one not upper case ASCII ("lower").
            func isUpper(_ index: Int) -> Bool { isLetter(index) && !(0x61...0x7A).contains(codepoint(index)) }
            func isLower(_ index: Int) -> Bool { isLetter(index) && !(0x41...0x5A).contains(codepoint(index)) }
            func withContraction(_ index: Int) -> Int {
                index - position + (index < end ? contractionLength(text, at: index, end: end, ignoringCase: true) ?? 0 : 0)
            }
            // The two word alternatives, after the optional non-letter, non-number character.
            let prefixed = !isLineBreak(position) && !isLetter(position) && !flags(position).contains(.number) && position < end
            let start = prefixed ? position + 1 : position
            var uppers = 0
            while isUpper(start + uppers) { uppers += 1 }
            // Upper* Lower+: the longest run of uppers that a lower follows, then every lower after it.
            for taken in stride(from: uppers, through: 0, by: -1) where isLower(start + taken) {
                var index = start + taken + 1
                while isLower(index) { index += 1 }
                return withContraction(index)
            }
            // Upper+ Lower*.
            if uppers > 0 {
                var index = start + uppers
                while isLower(index) { index += 1 }
                return withContraction(index)
            }
            if flags(position).contains(.number) {
                var index = position
                while index - position < 3, flags(index).contains(.number) { index += 1 }
                return index - position
            }
            let otherStart = codepoint(position) == 0x20 && isOther(position + 1) ? position + 1 : position
            if isOther(otherStart) {
                var index = otherStart
                while isOther(index) { index += 1 }
                while isLineBreak(index) || codepoint(index) == 0x2F { index += 1 }
                return index - position
            }
            return whitespace(untilLastLineBreak: true)

        case .numbers(let maxRun):
            var index = position
            while index - position < maxRun, flags(index).contains(.number) { index += 1 }
            return index - position

        case .lineBreak:
            return isLineBreak(position) ? 1 : 0

        case .lineFeedRuns:
            let feeds = codepoint(position) == 0x0A
            var index = position + 1
            while index < end, (codepoint(index) == 0x0A) == feeds { index += 1 }
            return index - position

        case .optionalSpaceThenRun(let set):
            var index = position
            if isSpace(index), index + 1 < end, set.contains(text[index + 1]) { index += 1 }
            let runStart = index
            while index < end, set.contains(text[index]) { index += 1 }
            return index > runStart ? index - position : 0

        case .run(let set):
            var index = position
            while index < end, set.contains(text[index]) { index += 1 }
            return index - position

        case .trailingWhitespace:
            var index = position
            while index < end, isSpace(index) { index += 1 }
            if index == end, index > position { return index - position }
            return -(index - position)

        case .asciiDigitTriple:
            for offset in 0..<3 where !(0x30...0x39).contains(codepoint(position + offset)) { return 0 }
            return 3
        }
    }

    private var isLlama3: Bool {
        if case .llama3 = self { return true }
        return false
    }

    /// `'s|'t|'re|'ve|'m|'ll|'d` at `position`, optionally ignoring the letters' case.
    private func contractionLength(_ text: UnsafeBufferPointer<UInt32>, at position: Int, end: Int, ignoringCase: Bool) -> Int? {
        guard text[position] == 0x27, position + 1 < end else { return nil }
        func letter(_ index: Int) -> UInt32 {
            let value = text[index]
            return ignoringCase && (0x41...0x5A).contains(value) ? value + 0x20 : value
        }
        let first = letter(position + 1)
        if [0x73, 0x74, 0x6D, 0x64].contains(first) { return 2 }  // s t m d
        guard position + 2 < end else { return nil }
        let pair = (first, letter(position + 2))
        if pair == (0x72, 0x65) || pair == (0x76, 0x65) || pair == (0x6C, 0x6C) { return 3 }  // re ve ll
        return nil
    }
}
