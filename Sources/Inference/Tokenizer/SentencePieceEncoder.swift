/// SentencePiece's byte-pair merge as llama.cpp's SPM tokenizer does it: start from UTF-8
/// characters, keep merging the adjacent pair that forms the best-scoring token, and write any
/// piece that is not a token as byte tokens.
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
        let left: Int
        let right: Int
        let score: Float
        let length: Int

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
        var merges: [ArraySlice<UInt8>: (Int, Int)] = [:]
        text.withUnsafeBufferPointer { buffer in
            func addBigram(_ left: Int, _ right: Int) {
                guard left >= 0, right >= 0 else { return }
                let start = symbols[left].start
                let length = symbols[left].length + symbols[right].length
                guard let id = lookup.id(of: UnsafeBufferPointer(rebasing: buffer[start..<(start + length)])) else { return }
                queue.push(Bigram(left: left, right: right, score: scores[Int(id)], length: length))
                merges[text[start..<(start + length)]] = (left, right)
            }
            for index in symbols.indices.dropFirst() { addBigram(index - 1, index) }
            while let bigram = queue.pop() {
                let left = symbols[bigram.left], right = symbols[bigram.right]
                guard left.length > 0, right.length > 0, left.length + right.length == bigram.length else { continue }
                symbols[bigram.left].length += right.length
                symbols[bigram.right].length = 0
                symbols[bigram.left].next = right.next
                if right.next >= 0 { symbols[right.next].previous = bigram.left }
                addBigram(symbols[bigram.left].previous, bigram.left)
                addBigram(bigram.left, symbols[bigram.left].next)
            }
            var index = symbols.isEmpty ? -1 : 0
            while index != -1 {
                resegment(symbols[index], buffer: buffer, symbols: symbols, merges: merges, into: &output)
                index = symbols[index].next
            }
        }
    }

    private func resegment(_ symbol: Symbol, buffer: UnsafeBufferPointer<UInt8>, symbols: [Symbol],
                           merges: [ArraySlice<UInt8>: (Int, Int)], into output: inout [Int32]) {
        let range = symbol.start..<(symbol.start + symbol.length)
        if let id = lookup.id(of: UnsafeBufferPointer(rebasing: buffer[range])) {
            output.append(id)
        } else if let (left, right) = merges[ArraySlice(buffer[range])] {
            resegment(symbols[left], buffer: buffer, symbols: symbols, merges: merges, into: &output)
            resegment(symbols[right], buffer: buffer, symbols: symbols, merges: merges, into: &output)
        } else {
            output += buffer[range].map { byteTokens[Int($0)] }
        }
    }
}
