/// A set of Unicode code points a grammar's terminal matches: the ranges of `[a-z0-9_]`, the
/// complement of `[^"\\]`, any code point for `.`, one for a literal's character. Kept as sorted,
/// disjoint ranges (negation already applied), with a bitmap of the ASCII ones for speed.
struct CharacterClass: Hashable, Sendable {
    /// The largest Unicode code point.
    static let maximum: UInt32 = 0x10FFFF

    /// Sorted, disjoint, non-adjacent ranges: exactly the code points matched.
    let ranges: [ClosedRange<UInt32>]
    /// Bit `c` set when ASCII code point `c` is matched (low and high 64).
    private let asciiLow: UInt64
    private let asciiHigh: UInt64
    /// Whether the class matches every code point past ASCII, or none: then every such code
    /// point leads a grammar to the same state.
    let takesAllOrNoneBeyondASCII: Bool

    /// The code points of `ranges` (in any order, overlapping or not), or of their complement
    /// when `negated`.
    init(_ ranges: [ClosedRange<UInt32>], negated: Bool = false) {
        var merged: [ClosedRange<UInt32>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        if negated {
            var complement: [ClosedRange<UInt32>] = []
            var next: UInt32 = 0
            for range in merged {
                if range.lowerBound > next { complement.append(next...(range.lowerBound - 1)) }
                next = range.upperBound &+ 1
            }
            if next <= Self.maximum { complement.append(next...Self.maximum) }
            merged = complement
        }
        self.ranges = merged
        var low: UInt64 = 0
        var high: UInt64 = 0
        for range in merged where range.lowerBound < 128 {
            for code in range.lowerBound...min(range.upperBound, 127) {
                if code < 64 { low |= 1 << UInt64(code) } else { high |= 1 << UInt64(code - 64) }
            }
        }
        asciiLow = low
        asciiHigh = high
        let beyond = merged.filter { $0.upperBound >= 0x80 }
        takesAllOrNoneBeyondASCII = beyond.isEmpty || (beyond.count == 1 && beyond[0].lowerBound <= 0x80 && beyond[0].upperBound == Self.maximum)
    }

    /// Exactly the code point `code`.
    init(single code: UInt32) {
        self.init([code...code])
    }

    /// Every code point (`.`).
    static let any = CharacterClass([0...maximum])

    /// Whether the class matches `code`.
    func contains(_ code: UInt32) -> Bool {
        if code < 64 { return asciiLow & (1 << UInt64(code)) != 0 }
        if code < 128 { return asciiHigh & (1 << UInt64(code - 64)) != 0 }
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < code { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].lowerBound <= code
    }

    /// Whether the class matches some code point in `candidates` (the code points a partial
    /// UTF-8 sequence may still become).
    func overlaps(_ candidates: ClosedRange<UInt32>) -> Bool {
        ranges.contains { $0.overlaps(candidates) }
    }
}
