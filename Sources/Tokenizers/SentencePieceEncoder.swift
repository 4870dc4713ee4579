/// SentencePiece's byte-pair merge as llama.cpp's SPM tokenizer does it: start from UTF-8
/// characters, keep merging the adjacent pair that forms the best-scoring token, and write any
/// piece that is not a token as byte tokens.
///
/// Only pairs that form a token are ever merged, so every merged piece is a token; llama.cpp's
/// map from merged text back to its halves is never consulted for them, and a piece that is not
/// a token is always a single character, written as its bytes.
struct SentencePieceEncoder: Sendable {
    private let lookup: TokenLookup
    private let scores: [Float]
    private let byteTokens: [Int32]

    private struct Symbol {
        var start: Int
        var length: Int
        var previous: Int
        var next: Int
    }

    private struct Bigram: Comparable {
        let left: Int32
        let right: Int32
        let score: Float
        let length: Int32

        // The queue pops the highest score first; on ties, the leftmost pair.
        static func < (lhs: Bigram, rhs: Bigram) -> Bool {
            lhs.score < rhs.score || (lhs.score == rhs.score && lhs.left > rhs.left)
        }
    }

    /// An encoder over a vocabulary whose byte tokens are `byteTokens` (`<0xNN>`, by byte).
    init(lookup: TokenLookup, scores: [Float], byteTokens: [Int32]) {
        self.lookup = lookup
        self.scores = scores
        self.byteTokens = byteTokens
    }

    /// Appends the tokens of `text` (spaces already escaped as `▁`) to `output`.
    func encode(_ text: [UInt8], into output: inout [Int32]) {
        var symbols: [Symbol] = []
        var offset = 0
        while offset < text.count {
            let length = min(UTF8Codepoints.sequenceLength(text[offset]), text.count - offset)
            symbols.append(Symbol(start: offset, length: length, previous: symbols.count - 1,
                                  next: offset + length == text.count ? -1 : symbols.count + 1))
            offset += length
        }
        var queue = PriorityQueue<Bigram>()
        text.withUnsafeBufferPointer { buffer in
            func addBigram(_ left: Int, _ right: Int) {
                guard left >= 0, right >= 0 else { return }
                let start = symbols[left].start
                let length = symbols[left].length + symbols[right].length
                guard let id = lookup.id(of: UnsafeBufferPointer(rebasing: buffer[start..<(start + length)])) else { return }
                queue.push(Bigram(left: Int32(left), right: Int32(right), score: scores[Int(id)], length: Int32(length)))
            }
            for index in symbols.indices.dropFirst() { addBigram(index - 1, index) }
            while let bigram = queue.pop() {
                let leftIndex = Int(bigram.left), rightIndex = Int(bigram.right)
                let left = symbols[leftIndex], right = symbols[rightIndex]
                guard left.length > 0, right.length > 0, left.length + right.length == Int(bigram.length) else { continue }
                symbols[leftIndex].length += right.length
                symbols[rightIndex].length = 0
                symbols[leftIndex].next = right.next
                if right.next >= 0 { symbols[right.next].previous = leftIndex }
                addBigram(symbols[leftIndex].previous, leftIndex)
                addBigram(leftIndex, symbols[leftIndex].next)
            }
            var index = symbols.isEmpty ? -1 : 0
            while index != -1 {
                let symbol = symbols[index]
                let range = symbol.start..<(symbol.start + symbol.length)
                if let id = lookup.id(of: UnsafeBufferPointer(rebasing: buffer[range])) {
                    output.append(id)
                } else {
                    for byte in buffer[range] { output.append(byteTokens[Int(byte)]) }
                }
                index = symbol.next
            }
        }
    }
}
