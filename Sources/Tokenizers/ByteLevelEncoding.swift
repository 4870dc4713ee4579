/// GPT-2's byte-level encoding: every byte stands for one printable code point (printable Latin-1
/// for itself, the rest shifted to U+0100…), so BPE vocabularies are text.
enum ByteLevelEncoding {
    /// The code point standing for each byte.
    static let codepointOfByte: [UInt32] = {
        var result = [UInt32](repeating: 0, count: 256)
        var next: UInt32 = 256
        for byte in 0..<256 {
            let printable = (0x21...0x7E).contains(byte) || (0xA1...0xAC).contains(byte) || (0xAE...0xFF).contains(byte)
            if printable {
                result[byte] = UInt32(byte)
            } else {
                result[byte] = next
                next += 1
            }
        }
        return result
    }()

    /// The UTF-8 bytes of the code point standing for each byte.
    static let encodedByte: [[UInt8]] = codepointOfByte.map { codepoint in
        var bytes: [UInt8] = []
        UTF8Codepoints.encode(codepoint, into: &bytes)
        return bytes
    }

    /// The byte a code point stands for, if it stands for one.
    static func byte(of codepoint: UInt32) -> UInt8? {
        if codepoint < 256 {
            let byte = UInt8(codepoint)
            return codepointOfByte[Int(byte)] == codepoint ? byte : nil
        }
        guard codepoint < 256 + 68, let index = codepointOfByte.firstIndex(of: codepoint) else { return nil }
        return UInt8(index)
    }

    /// The bytes a byte-level token text stands for, as llama.cpp's `llama_decode_text` gives them
    /// (a code point outside the map is written as `[UNK_BYTE_0x…]`).
    static func decode(_ text: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        for codepoint in UTF8Codepoints.decode(text[...]) {
            if let byte = byte(of: codepoint) {
                result.append(byte)
            } else {
                var utf8: [UInt8] = []
                UTF8Codepoints.encode(codepoint, into: &utf8)
                result += Array("[UNK_BYTE_0x".utf8)
                for byte in utf8 { result += Array(String(byte, radix: 16).leftPadded(to: 2).utf8) }
                result += text
                result.append(UInt8(ascii: "]"))
            }
        }
        return result
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
