/// A bracketed character class of a pre-tokenizer's regular expression (`[A-Za-zµÀ-Ö…]`,
/// `[\p{P}$+<=>^~|]`): code point classes and explicit ranges.
///
/// Matched as llama.cpp's `std::regex` fallback sees text: a non-ASCII whitespace code point has
/// been replaced by U+000B before matching, so it is never in a set.
struct CodepointSet: Sendable {
    private let classes: CodepointClass
    private let ranges: [ClosedRange<UInt32>]

    /// A set of classes plus the ranges written in `ranges`, a class's text without brackets in
    /// which `a-b` is a range and any other character stands for itself.
    init(classes: CodepointClass = [], ranges text: String = "") {
        let scalars = text.unicodeScalars.map(\.value)
        var ranges: [ClosedRange<UInt32>] = []
        var index = 0
        while index < scalars.count {
            if index + 2 < scalars.count, scalars[index + 1] == UInt32(UInt8(ascii: "-")) {
                ranges.append(scalars[index]...scalars[index + 2])
                index += 3
            } else {
                ranges.append(scalars[index]...scalars[index])
                index += 1
            }
        }
        self.classes = classes
        self.ranges = ranges.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Whether `codepoint` is in the set.
    @inline(__always)
    func contains(_ codepoint: UInt32) -> Bool {
        let codepointClass = CodepointClass.of(codepoint)
        if codepoint > 0x7F, codepointClass.contains(.whitespace) { return false }
        if !codepointClass.isDisjoint(with: classes) { return true }
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < codepoint { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(codepoint)
    }
}
