/// UTF-8 to code points and back, with llama.cpp's leniency: a byte that does not start a
/// well-formed sequence becomes U+FFFD and decoding goes on at the next byte, so any input
/// tokenizes exactly as llama.cpp tokenizes it.
enum UTF8Codepoints {
    /// The code points of `bytes`.
    static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        let end = bytes.endIndex
        func continuation(_ offset: Int) -> UInt32? {
            let position = index + offset
            guard position < end, bytes[position] & 0xC0 == 0x80 else { return nil }
            return UInt32(bytes[position] & 0x3F)
        }
        while index < end {
            let lead = bytes[index]
            if lead & 0x80 == 0 {
                result.append(UInt32(lead))
                index += 1
            } else if lead & 0x40 != 0, lead & 0x20 == 0, let b1 = continuation(1) {
                result.append(UInt32(lead & 0x1F) << 6 | b1)
                index += 2
            } else if lead & 0x60 == 0x60, lead & 0x10 == 0, let b1 = continuation(1), let b2 = continuation(2) {
                result.append(UInt32(lead & 0x0F) << 12 | b1 << 6 | b2)
                index += 3
            } else if lead & 0x70 == 0x70, lead & 0x08 == 0, let b1 = continuation(1), let b2 = continuation(2), let b3 = continuation(3) {
                result.append(UInt32(lead & 0x07) << 18 | b1 << 12 | b2 << 6 | b3)
                index += 4
            } else {
                result.append(0xFFFD)
                index += 1
            }
        }
        return result
    }

    /// Appends the UTF-8 encoding of `codepoint` to `output`.
    @inline(__always)
    static func encode(_ codepoint: UInt32, into output: inout [UInt8]) {
        switch codepoint {
        case ..<0x80:
            output.append(UInt8(codepoint))
        case ..<0x800:
            output.append(0xC0 | UInt8(codepoint >> 6))
            output.append(0x80 | UInt8(codepoint & 0x3F))
        case ..<0x10000:
            output.append(0xE0 | UInt8(codepoint >> 12))
            output.append(0x80 | UInt8((codepoint >> 6) & 0x3F))
            output.append(0x80 | UInt8(codepoint & 0x3F))
        default:
            output.append(0xF0 | UInt8((codepoint >> 18) & 0x07))
            output.append(0x80 | UInt8((codepoint >> 12) & 0x3F))
            output.append(0x80 | UInt8((codepoint >> 6) & 0x3F))
            output.append(0x80 | UInt8(codepoint & 0x3F))
        }
    }

    /// The length of the UTF-8 sequence `lead` starts, as llama.cpp's `unicode_len_utf8` gives it.
    @inline(__always)
    static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead >> 4 {
        case 0xF: 4
        case 0xE: 3
        case 0xC, 0xD: 2
        default: 1
        }
    }
}
