/// The bytes of a UTF-8 character read so far when a token ends inside it (a byte token, or a
/// byte-level BPE token holding part of a character): its bits so far, its length and how many
/// continuation bytes are still to come. Empty (0 to come) between characters.
struct UTF8Prefix: Hashable, Sendable {
    /// The bits of the character read so far.
    private var bits: UInt32 = 0
    /// Continuation bytes still to come; 0 between characters.
    private var remaining: UInt8 = 0
    /// The character's length in bytes.
    private var length: UInt8 = 0

    /// What one more byte makes of a prefix.
    enum Step {
        /// A whole code point.
        case character(UInt32)
        /// A longer prefix of a character.
        case prefix(UTF8Prefix)
        /// Not UTF-8.
        case invalid
    }

    /// The smallest code point of each length (shorter encodings of smaller ones are invalid).
    private static let smallest: [UInt32] = [0, 0, 0x80, 0x800, 0x10000]

    /// Whether no character is under way.
    var isEmpty: Bool { remaining == 0 }

    /// This prefix followed by `byte`.
    func adding(_ byte: UInt8) -> Step {
        if remaining == 0 {
            switch byte {
            case 0..<0x80: return .character(UInt32(byte))
            case 0xC2..<0xE0: return .prefix(UTF8Prefix(bits: UInt32(byte & 0x1F), remaining: 1, length: 2))
            case 0xE0..<0xF0: return .prefix(UTF8Prefix(bits: UInt32(byte & 0x0F), remaining: 2, length: 3))
            case 0xF0..<0xF5: return .prefix(UTF8Prefix(bits: UInt32(byte & 0x07), remaining: 3, length: 4))
            default: return .invalid
            }
        }
        guard byte & 0xC0 == 0x80 else { return .invalid }
        let next = UTF8Prefix(bits: bits << 6 | UInt32(byte & 0x3F), remaining: remaining - 1, length: length)
        guard let completions = next.completions else { return .invalid }
        return next.remaining == 0 ? .character(completions.lowerBound) : .prefix(next)
    }

    /// The code points this prefix can still become, or nil when none is valid (an overlong
    /// form, a surrogate, past U+10FFFF). For a whole character, just it.
    var completions: ClosedRange<UInt32>? {
        let shift = UInt32(remaining) * 6
        let low = max(bits << shift, Self.smallest[Int(length)])
        let high = min(bits << shift | ((1 << shift) - 1), CharacterClass.maximum)
        guard low <= high else { return nil }
        if remaining == 0, (0xD800...0xDFFF).contains(low) { return nil }
        return low...high
    }

    /// The prefix packed into 32 bits (a cache key).
    var packed: UInt32 { bits << 5 | UInt32(remaining) << 3 | UInt32(length) }
}
