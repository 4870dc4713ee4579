/// Token texts by id and ids by text, without allocating per lookup: the texts live in one byte
/// arena and an open-addressing table of ids is probed with a hash of the bytes looked up.
struct TokenLookup: Sendable {
    private let arena: [UInt8]
    private let starts: [Int32]
    private let slots: [Int32]
    private let mask: Int

    /// Indexes `texts` (id = position). When two tokens have the same text, the first id wins.
    init(_ texts: [[UInt8]]) {
        var arena: [UInt8] = []
        arena.reserveCapacity(texts.reduce(0) { $0 + $1.count })
        var starts: [Int32] = [0]
        starts.reserveCapacity(texts.count + 1)
        for text in texts {
            arena += text
            starts.append(Int32(arena.count))
        }
        var capacity = 16
        while capacity < texts.count * 2 { capacity <<= 1 }
        var slots = [Int32](repeating: -1, count: capacity)
        let mask = capacity - 1
        for (id, text) in texts.enumerated() {
            var slot = text.withUnsafeBufferPointer { Self.hash($0) } & mask
            while slots[slot] >= 0 {
                let other = Int(slots[slot])
                if arena[Int(starts[other])..<Int(starts[other + 1])].elementsEqual(text) { break }
                slot = (slot + 1) & mask
            }
            if slots[slot] < 0 { slots[slot] = Int32(id) }
        }
        self.arena = arena
        self.starts = starts
        self.slots = slots
        self.mask = mask
    }

    /// The id of the token whose text is `bytes`.
    @inline(__always)
    func id(of bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        var slot = Self.hash(bytes) & mask
        return arena.withUnsafeBufferPointer { arena in
            while true {
                let id = slots[slot]
                if id < 0 { return nil }
                let start = Int(starts[Int(id)]), end = Int(starts[Int(id) + 1])
                if end - start == bytes.count {
                    var equal = true
                    for index in 0..<bytes.count where arena[start + index] != bytes[index] {
                        equal = false
                        break
                    }
                    if equal { return id }
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// The number of texts.
    var count: Int { starts.count - 1 }

    /// The text of token `id`.
    func text(of id: Int) -> ArraySlice<UInt8> {
        arena[Int(starts[id])..<Int(starts[id + 1])]
    }

    /// The id of the token whose text is `bytes`.
    func id(of bytes: some Collection<UInt8>) -> Int32? {
        let array = Array(bytes)
        return array.withUnsafeBufferPointer { id(of: $0) }
    }

    @inline(__always)
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }
}
