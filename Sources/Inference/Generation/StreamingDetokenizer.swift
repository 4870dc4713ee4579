/// Turns token bytes into text as they arrive, holding back an incomplete UTF-8 sequence at the
/// end so that a stream never emits a broken character.
struct StreamingDetokenizer {
    private var pending: [UInt8] = []

    /// Adds `bytes` and returns the text that is now complete.
    mutating func append(_ bytes: [UInt8]) -> String {
        pending += bytes
        let complete = Self.completePrefixLength(pending)
        defer { pending.removeFirst(complete) }
        return String(decoding: pending[..<complete], as: UTF8.self)
    }

    /// Whatever is still held back, with invalid bytes replaced.
    mutating func flush() -> String {
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    /// The length of the longest prefix that does not end inside a UTF-8 sequence.
    static func completePrefixLength(_ bytes: [UInt8]) -> Int {
        var start = bytes.count
        // Look back at most three continuation bytes for the start of the last sequence.
        while start > 0, bytes.count - start < 4, bytes[start - 1] & 0xC0 == 0x80 { start -= 1 }
        guard start > 0 else { return bytes.count }
        let lead = bytes[start - 1]
        let needed = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        return bytes.count - (start - 1) < needed ? start - 1 : bytes.count
    }
}
