/// Where a byte offset of UTF-8 text is, as people count: its 1-based line and column (in
/// characters). The JSON reader and the grammar parser both report their mistakes with it.
public struct TextPosition: Equatable, Sendable {
    public let line: Int
    public let column: Int

    /// The position of byte `offset` (at most the text's length) of `text`.
    public init(offset: Int, in text: [UInt8]) {
        let before = text[..<min(offset, text.count)]
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        column = text[lineStart..<before.endIndex].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }
}
