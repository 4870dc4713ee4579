/// The classes of a code point that llama.cpp's pre-tokenizers test (`\p{L}`, `\p{N}`, `\p{P}`,
/// `\s`, …), with llama.cpp's whitespace set (the Unicode `White_Space` property).
///
/// Categories come from the Unicode tables of the Swift standard library; llama.cpp generates its
/// tables from the Unicode Character Database, so the two agree wherever both Unicode versions
/// have assigned the code point.
struct CodepointClass: OptionSet, Sendable {
    let rawValue: UInt16

    static let letter = CodepointClass(rawValue: 1 << 0)
    static let number = CodepointClass(rawValue: 1 << 1)
    static let punctuation = CodepointClass(rawValue: 1 << 2)
    static let symbol = CodepointClass(rawValue: 1 << 3)
    static let accentMark = CodepointClass(rawValue: 1 << 4)
    static let separator = CodepointClass(rawValue: 1 << 5)
    static let control = CodepointClass(rawValue: 1 << 6)
    static let whitespace = CodepointClass(rawValue: 1 << 7)
    /// Unassigned, private use or a surrogate: still a code point inside the text.
    static let other = CodepointClass(rawValue: 1 << 8)

    private static let ascii: [CodepointClass] = (0..<128).map { computed(UInt32($0)) }

    /// The class of `codepoint`.
    @inline(__always)
    static func of(_ codepoint: UInt32) -> CodepointClass {
        codepoint < 128 ? ascii[Int(codepoint)] : computed(codepoint)
    }

    private static func computed(_ codepoint: UInt32) -> CodepointClass {
        guard let scalar = Unicode.Scalar(codepoint) else { return .other }
        var result: CodepointClass
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            result = .letter
        case .decimalNumber, .letterNumber, .otherNumber:
            result = .number
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation:
            result = .punctuation
        case .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            result = .symbol
        case .nonspacingMark, .spacingMark, .enclosingMark:
            result = .accentMark
        case .spaceSeparator, .lineSeparator, .paragraphSeparator:
            result = .separator
        case .control, .format:
            result = .control
        default:
            result = .other
        }
        if scalar.properties.isWhitespace { result.insert(.whitespace) }
        return result
    }
}
