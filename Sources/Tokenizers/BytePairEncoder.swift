/// Byte-level BPE as llama.cpp's BPE tokenizer does it: split the text into words with the
/// vocabulary's pre-tokenizer, write each word's bytes as GPT-2 code points, then keep merging the
/// adjacent pair with the lowest merge rank (leftmost on ties); a piece that is not a token is
/// written byte by byte. A pre-tokenizer that escapes spaces (Gemma 4) merges the word's
/// characters instead, and writes a piece that is not a token as `<0xXX>` byte tokens.
struct BytePairEncoder: Sendable {
    /// How text is split into words.
    let preTokenizer: PreTokenizer
    private let lookup: TokenLookup
    /// Merge rank and result by (left symbol, right symbol): `rank << 32 | result`. Symbols are
    /// token ids, or ids past the vocabulary for merge parts that are not tokens themselves.
    private let merges: [UInt64: UInt64]
    /// Symbols past the vocabulary, by text.
    private let extraSymbols: [[UInt8]: Int32]
    /// The symbol of each byte's GPT-2 code point.
    private let byteSymbols: [Int32]
    /// The `<0xXX>` token of each byte, for a vocabulary that escapes spaces.
    private let byteTokens: [Int32?]

    /// Reads `merges` ("left right", by rank) against the vocabulary in `lookup`.
    init(preTokenizer: PreTokenizer, lookup: TokenLookup, merges lines: [[UInt8]]) {
        self.preTokenizer = preTokenizer
        self.lookup = lookup
        var extraSymbols: [[UInt8]: Int32] = [:]
        func symbol(_ text: [UInt8], create: Bool) -> Int32? {
            if let id = lookup.id(of: text) { return id }
            if let id = extraSymbols[text] { return id }
            guard create else { return nil }
            let id = Int32(lookup.count + extraSymbols.count)
            extraSymbols[text] = id
            return id
        }
        var parts: [(left: Int32, right: Int32, text: [UInt8])] = []
        parts.reserveCapacity(lines.count)
        for line in lines {
            // llama.cpp splits at the first space after the first byte; a line without one
            // is the empty pair.
            let split = line.dropFirst().firstIndex(of: 0x20)
            let left = split.map { Array(line[..<$0]) } ?? []
            let right = split.map { Array(line[($0 + 1)...]) } ?? []
            parts.append((symbol(left, create: true) ?? -1, symbol(right, create: true) ?? -1, left + right))
        }
        var merges: [UInt64: UInt64] = [:]
        merges.reserveCapacity(parts.count)
        for (rank, part) in parts.enumerated() {
            let key = UInt64(UInt32(bitPattern: part.left)) << 32 | UInt64(UInt32(bitPattern: part.right))
            guard merges[key] == nil else { continue }
            let result = symbol(part.text, create: false) ?? -1
            merges[key] = UInt64(rank) << 32 | UInt64(UInt32(bitPattern: result))
        }
        self.merges = merges
        self.extraSymbols = extraSymbols
        byteSymbols = ByteLevelEncoding.encodedByte.map { lookup.id(of: $0) ?? extraSymbols[$0] ?? -1 }
        byteTokens = (0...255).map { lookup.id(of: Array("<0x\($0 < 16 ? "0" : "")\(String($0, radix: 16, uppercase: true))>".utf8)) }
    }

    private struct Symbol {
        var start: Int
        var length: Int
        var id: Int32
        var previous: Int
        var next: Int
    }

    private struct Bigram: Comparable {
        let left: Int
        let right: Int
        let rank: UInt32
        let leftLength: Int
        let rightLength: Int

        // The queue pops the lowest rank first; on ties, the leftmost pair.
        static func < (lhs: Bigram, rhs: Bigram) -> Bool {
            lhs.rank > rhs.rank || (lhs.rank == rhs.rank && lhs.left > rhs.left)
        }
    }

    /// Appends the tokens of `text` to `output`.
    func encode(_ text: ArraySlice<UInt8>, into output: inout [Int32]) {
        var codepoints = UTF8Codepoints.decode(text)
        let escapes = preTokenizer.escapesSpaces
        if escapes { codepoints = codepoints.map { $0 == 0x20 ? 0x2581 : $0 } }
        var word: [UInt8] = [], encoded: [UInt8] = []
        var symbols: [Symbol] = []
        var queue = PriorityQueue<Bigram>()
        for range in preTokenizer.words(codepoints) {
            encoded.removeAll(keepingCapacity: true)
            symbols.removeAll(keepingCapacity: true)
            if escapes {
                // The word's characters, as they are: a word of line feeds that is a token is one.
                for codepoint in codepoints[range] {
                    let start = encoded.count
                    UTF8Codepoints.encode(codepoint, into: &encoded)
                    let character = encoded[start...]
                    symbols.append(Symbol(start: start, length: encoded.count - start,
                                          id: lookup.id(of: character) ?? extraSymbols[Array(character)] ?? -1,
                                          previous: symbols.count - 1, next: symbols.count + 1))
                }
                if codepoints[range].allSatisfy({ $0 == 0x0A }), let id = lookup.id(of: encoded) {
                    output.append(id)
                    continue
                }
            } else {
                // The word's bytes as GPT-2 code points.
                word.removeAll(keepingCapacity: true)
                for codepoint in codepoints[range] { UTF8Codepoints.encode(codepoint, into: &word) }
                for byte in word {
                    let start = encoded.count
                    encoded += ByteLevelEncoding.encodedByte[Int(byte)]
                    symbols.append(Symbol(start: start, length: encoded.count - start, id: byteSymbols[Int(byte)],
                                          previous: symbols.count - 1, next: symbols.count + 1))
                }
            }
            symbols[symbols.count - 1].next = -1
            if preTokenizer.ignoresMerges, let id = lookup.id(of: encoded) {
                output.append(id)
                continue
            }
            mergeSymbols(&symbols, queue: &queue)
            var index = 0
            while index != -1 {
                let symbol = symbols[index]
                if symbol.id >= 0, symbol.id < lookup.count {
                    output.append(symbol.id)
                } else {
                    for byte in encoded[symbol.start..<(symbol.start + symbol.length)] {
                        if let id = escapes ? byteTokens[Int(byte)] : lookup.id(of: CollectionOfOne(byte)) { output.append(id) }
                    }
                }
                index = symbol.next
            }
        }
    }

    private func mergeSymbols(_ symbols: inout [Symbol], queue: inout PriorityQueue<Bigram>) {
        queue.removeAll()
        func addBigram(_ left: Int, _ right: Int) {
            guard left >= 0, right >= 0, symbols[left].id >= 0, symbols[right].id >= 0 else { return }
            let key = UInt64(UInt32(bitPattern: symbols[left].id)) << 32 | UInt64(UInt32(bitPattern: symbols[right].id))
            guard let merge = merges[key] else { return }
            queue.push(Bigram(left: left, right: right, rank: UInt32(merge >> 32),
                              leftLength: symbols[left].length, rightLength: symbols[right].length))
        }
        for index in symbols.indices.dropFirst() { addBigram(index - 1, index) }
        while let bigram = queue.pop() {
            let left = symbols[bigram.left], right = symbols[bigram.right]
            guard left.length == bigram.leftLength, right.length == bigram.rightLength, right.length > 0 else { continue }
            let key = UInt64(UInt32(bitPattern: left.id)) << 32 | UInt64(UInt32(bitPattern: right.id))
            symbols[bigram.left].id = Int32(bitPattern: UInt32(truncatingIfNeeded: merges[key] ?? UInt64(UInt32.max)))
            symbols[bigram.left].length += right.length
            symbols[bigram.right].length = 0
            symbols[bigram.left].next = right.next
            if right.next >= 0 { symbols[right.next].previous = bigram.left }
            addBigram(symbols[bigram.left].previous, bigram.left)
            addBigram(bigram.left, symbols[bigram.left].next)
        }
    }
}
