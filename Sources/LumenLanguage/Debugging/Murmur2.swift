/// MurmurHash2 (32-bit, Austin Appleby's), over a text's UTF-8 bytes: the hash JupyterLab's
/// debugger and ipykernel name a cell's source by (`hashMethod: Murmur2`), so the path the
/// kernel gives a cell is the path the front end computes for it.
enum Murmur2 {
    private static let multiplier: UInt32 = 0x5BD1_E995

    /// The hash of `text`'s UTF-8 bytes with `seed`.
    static func hash(_ text: String, seed: UInt32) -> UInt32 {
        let bytes = Array(text.utf8)
        var hash = seed ^ UInt32(truncatingIfNeeded: bytes.count)
        var index = 0
        while bytes.count - index >= 4 {
            var word = UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
            word &*= multiplier
            word ^= word >> 24
            word &*= multiplier
            hash = (hash &* multiplier) ^ word
            index += 4
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            if remaining == 3 { hash ^= UInt32(bytes[index + 2]) << 16 }
            if remaining >= 2 { hash ^= UInt32(bytes[index + 1]) << 8 }
            hash ^= UInt32(bytes[index])
            hash &*= multiplier
        }
        hash ^= hash >> 13
        hash &*= multiplier
        hash ^= hash >> 15
        return hash
    }
}
