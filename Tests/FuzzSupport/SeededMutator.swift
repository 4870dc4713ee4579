/// A seeded mutation fuzzer for the test suites: from valid seed inputs it makes byte-level
/// mutants (bit flips, boundary bytes, insertions, deletions, duplicated runs, splices of other
/// seeds and of dictionary tokens, truncations) with a fixed-seed generator, so each run tries
/// the same inputs and a failure reproduces. A crash ends the test process (CI fails); a hang
/// trips the test's time limit.
public struct SeededMutator {
    private var state: UInt64
    private let seeds: [[UInt8]]
    private let dictionary: [[UInt8]]

    /// A mutator over `seeds` (at least one), splicing in `dictionary` tokens (keywords, magic
    /// numbers), starting from `seed`.
    public init(seeds: [[UInt8]], dictionary: [String] = [], seed: UInt64 = 0x5EED) {
        precondition(!seeds.isEmpty, "a fuzzer needs a seed input")
        self.seeds = seeds
        self.dictionary = dictionary.map { Array($0.utf8) }
        state = seed
    }

    /// SplitMix64.
    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func below(_ bound: Int) -> Int {
        bound <= 1 ? 0 : Int(next() % UInt64(bound))
    }

    /// The next input: a seed with one to eight mutations.
    public mutating func nextInput() -> [UInt8] {
        var bytes = seeds[below(seeds.count)]
        for _ in 0...below(8) { mutate(&bytes) }
        return bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let position = below(bytes.count + 1)
        switch below(8) {
        case 0 where !bytes.isEmpty:
            bytes[min(position, bytes.count - 1)] ^= UInt8(1) << UInt8(below(8))
        case 1 where !bytes.isEmpty:
            bytes[min(position, bytes.count - 1)] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x22, 0x5C, 0x7B][below(8)]
        case 2:
            bytes.insert(UInt8(truncatingIfNeeded: next()), at: position)
        case 3 where !bytes.isEmpty:
            bytes.removeSubrange(position..<min(bytes.count, position + 1 + below(16)))
        case 4 where !bytes.isEmpty:
            let start = min(position, bytes.count - 1)
            let run = bytes[start..<min(bytes.count, start + 1 + below(32))]
            bytes.insert(contentsOf: Array(repeating: Array(run), count: 1 + below(4)).joined(), at: start)
        case 5 where !dictionary.isEmpty:
            bytes.insert(contentsOf: dictionary[below(dictionary.count)], at: position)
        case 6:
            let other = seeds[below(seeds.count)]
            let start = below(other.count + 1)
            bytes.insert(contentsOf: other[start..<min(other.count, start + below(64))], at: position)
        default:
            bytes = Array(bytes.prefix(position))
        }
    }
}
