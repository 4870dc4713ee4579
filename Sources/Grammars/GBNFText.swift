/// Writing GBNF: literals and character classes escaped so llama.cpp's parser (and Lumen's) reads
/// back exactly the code points meant. The converters from JSON schemas, regular expressions and
/// choices write grammars with these.
enum GBNFText {
    /// `text` as a GBNF string literal.
    static func literal(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { escaped($0.value, inClass: false) }.joined() + "\""
    }

    /// A class of exactly the code points of `characterClass` (never negated), or nil if empty.
    static func characterClass(_ characterClass: CharacterClass) -> String? {
        guard !characterClass.ranges.isEmpty else { return nil }
        return "[" + characterClass.ranges.map { range in
            range.lowerBound == range.upperBound ? escaped(range.lowerBound, inClass: true)
                : escaped(range.lowerBound, inClass: true) + "-" + escaped(range.upperBound, inClass: true)
        }.joined() + "]"
    }

    /// One code point written inside a literal or a class.
    private static func escaped(_ code: UInt32, inClass: Bool) -> String {
        switch code {
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x22, 0x5C: return "\\" + String(UnicodeScalar(UInt8(code)))
        case 0x5B, 0x5D, 0x2D, 0x5E: return inClass ? "\\x" + hex(code, digits: 2) : String(UnicodeScalar(UInt8(code)))
        case 0..<0x20, 0x7F: return "\\x" + hex(code, digits: 2)
        case 0xD800...0xDFFF, 0x80..<0xA0: return "\\u" + hex(code, digits: 4)
        case 0x10000...: return "\\U" + hex(code, digits: 8)
        default: return String(UnicodeScalar(code)!)
        }
    }

    private static func hex(_ code: UInt32, digits: Int) -> String {
        let text = String(code, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
