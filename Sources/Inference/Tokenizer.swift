/// The SentencePiece-style ("llama") tokenizer as llama.cpp implements it: a space prefix, `▁` for
/// spaces, best-score pair merging, byte-fallback tokens, special tokens matched in the input, and
/// detokenization that hides control tokens.
public struct Tokenizer: Sendable {
    /// What kind of token an id is (GGUF `tokenizer.ggml.token_type`).
    public enum TokenKind: Int32, Sendable {
        case normal = 1, unknown = 2, control = 3, userDefined = 4, unused = 5, byte = 6
    }

    /// The token texts, by id, as bytes.
    public let pieces: [[UInt8]]
    /// The merge scores, by id.
    public let scores: [Float]
    /// The token kinds, by id.
    public let kinds: [TokenKind]
    /// The beginning-of-sequence token.
    public let bos: Int32
    /// The end-of-sequence token.
    public let eos: Int32
    /// Whether `encode` adds BOS by default.
    public let addsBOS: Bool
    /// Whether a space is put before the text (and after each special token).
    public let addsSpacePrefix: Bool

    private let idsByPiece: [[UInt8]: Int32]
    private let byteTokens: [Int32]
    /// Special tokens matched in text, longest first: (bytes, id, whether matched without parse_special).
    private let specialTokens: [(bytes: [UInt8], id: Int32, alwaysParsed: Bool)]

    private static let spaceMarker = Array("▁".utf8)

    /// Reads the vocabulary from a GGUF file's metadata.
    public init(gguf: GGUFFile) throws(ModelError) {
        let file = gguf.path
        let model = gguf.metadata["tokenizer.ggml.model"]?.stringValue
        guard model == "llama" else {
            throw ModelError(file: file, field: "tokenizer.ggml.model",
                             reason: model.map { "tokenizer \"\($0)\" is not supported (only \"llama\", SentencePiece, is)" } ?? "is missing")
        }
        guard let tokens = gguf.metadata["tokenizer.ggml.tokens"]?.arrayValue, !tokens.isEmpty else {
            throw ModelError(file: file, field: "tokenizer.ggml.tokens", reason: "is missing or empty")
        }
        var pieces: [[UInt8]] = []
        pieces.reserveCapacity(tokens.count)
        for (id, token) in tokens.enumerated() {
            guard let text = token.stringValue else {
                throw ModelError(file: file, field: "tokenizer.ggml.tokens[\(id)]", reason: "is not a string")
            }
            pieces.append(Array(text.utf8))
        }
        let scores = try Self.floats(gguf, "tokenizer.ggml.scores", count: pieces.count) ?? Array(repeating: 0, count: pieces.count)
        let rawKinds = try Self.integers(gguf, "tokenizer.ggml.token_type", count: pieces.count)
        let kinds = rawKinds.map { $0.map { TokenKind(rawValue: Int32(clamping: $0)) ?? .normal } } ?? Array(repeating: .normal, count: pieces.count)
        func tokenID(_ key: String, default value: Int32) throws(ModelError) -> Int32 {
            guard let raw = gguf.metadata[key]?.intValue else { return value }
            guard raw >= 0, raw < pieces.count else {
                throw ModelError(file: file, field: key, reason: "token id \(raw) is outside the vocabulary of \(pieces.count)")
            }
            return Int32(raw)
        }
        try self.init(
            pieces: pieces, scores: scores, kinds: kinds,
            bos: tokenID("tokenizer.ggml.bos_token_id", default: 1),
            eos: tokenID("tokenizer.ggml.eos_token_id", default: 2),
            addsBOS: { if case .bool(let flag)? = gguf.metadata["tokenizer.ggml.add_bos_token"] { flag } else { true } }(),
            addsSpacePrefix: { if case .bool(let flag)? = gguf.metadata["tokenizer.ggml.add_space_prefix"] { flag } else { true } }(),
            file: file
        )
    }

    /// Creates a tokenizer from a vocabulary.
    public init(pieces: [[UInt8]], scores: [Float], kinds: [TokenKind], bos: Int32, eos: Int32,
                addsBOS: Bool = true, addsSpacePrefix: Bool = true, file: String = "vocabulary") throws(ModelError) {
        self.pieces = pieces
        self.scores = scores
        self.kinds = kinds
        self.bos = bos
        self.eos = eos
        self.addsBOS = addsBOS
        self.addsSpacePrefix = addsSpacePrefix
        var idsByPiece: [[UInt8]: Int32] = [:]
        for (id, piece) in pieces.enumerated() { idsByPiece[piece] = Int32(id) }
        self.idsByPiece = idsByPiece
        var byteTokens: [Int32] = []
        for byte in 0...255 {
            let name = Array("<0x\(byte < 16 ? "0" : "")\(String(byte, radix: 16, uppercase: true))>".utf8)
            guard let id = idsByPiece[name] ?? idsByPiece[[UInt8(byte)]] else {
                throw ModelError(file: file, field: "tokenizer.ggml.tokens", reason: "has no token for byte 0x\(String(byte, radix: 16)) (byte fallback needs all 256)")
            }
            byteTokens.append(id)
        }
        self.byteTokens = byteTokens
        specialTokens = kinds.indices
            .filter { [.control, .userDefined, .unknown].contains(kinds[$0]) && !pieces[$0].isEmpty }
            .map { (pieces[$0], Int32($0), kinds[$0] == .userDefined) }
            .sorted { $0.bytes.count > $1.bytes.count }
    }

    private static func floats(_ gguf: GGUFFile, _ key: String, count: Int) throws(ModelError) -> [Float]? {
        guard let values = gguf.metadata[key]?.arrayValue else { return nil }
        guard values.count == count else {
            throw ModelError(file: gguf.path, field: key, reason: "has \(values.count) entries for \(count) tokens")
        }
        return values.map { Float($0.doubleValue ?? 0) }
    }

    private static func integers(_ gguf: GGUFFile, _ key: String, count: Int) throws(ModelError) -> [Int]? {
        guard let values = gguf.metadata[key]?.arrayValue else { return nil }
        guard values.count == count else {
            throw ModelError(file: gguf.path, field: key, reason: "has \(values.count) entries for \(count) tokens")
        }
        return values.map { $0.intValue ?? 1 }
    }

    /// The number of tokens.
    public var vocabularySize: Int { pieces.count }

    // MARK: - Encoding

    /// Token ids for `text`.
    ///
    /// - Parameters:
    ///   - addSpecial: prepend BOS (when the vocabulary says to).
    ///   - parseSpecial: turn control tokens written in the text (`<s>`) into their ids.
    public func encode(_ text: String, addSpecial: Bool = true, parseSpecial: Bool = true) -> [Int32] {
        var output: [Int32] = []
        if addSpecial && addsBOS { output.append(bos) }
        var previousWasSpecial = true
        for fragment in partition(Array(text.utf8), parseSpecial: parseSpecial) {
            switch fragment {
            case .token(let id):
                output.append(id)
                previousWasSpecial = true
            case .text(let bytes):
                var escaped: [UInt8] = addsSpacePrefix && previousWasSpecial ? Self.spaceMarker : []
                for byte in bytes {
                    if byte == UInt8(ascii: " ") { escaped += Self.spaceMarker } else { escaped.append(byte) }
                }
                encodePieces(escaped, into: &output)
                previousWasSpecial = false
            }
        }
        return output
    }

    private enum Fragment {
        case text([UInt8])
        case token(Int32)
    }

    /// Splits text around the special tokens found in it, longest tokens first.
    private func partition(_ bytes: [UInt8], parseSpecial: Bool) -> [Fragment] {
        guard !bytes.isEmpty else { return [] }
        var fragments: [Fragment] = [.text(bytes)]
        for special in specialTokens where parseSpecial || special.alwaysParsed {
            var split: [Fragment] = []
            for fragment in fragments {
                guard case .text(let text) = fragment else {
                    split.append(fragment)
                    continue
                }
                var start = 0
                var index = 0
                while index + special.bytes.count <= text.count {
                    if text[index..<(index + special.bytes.count)].elementsEqual(special.bytes) {
                        if index > start { split.append(.text(Array(text[start..<index]))) }
                        split.append(.token(special.id))
                        index += special.bytes.count
                        start = index
                    } else {
                        index += 1
                    }
                }
                if start < text.count { split.append(.text(Array(text[start...]))) }
            }
            fragments = split
        }
        return fragments
    }

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

    /// SentencePiece's merge: start from UTF-8 characters and keep merging the adjacent pair that
    /// forms the best-scoring token.
    private func encodePieces(_ text: [UInt8], into output: inout [Int32]) {
        var symbols: [Symbol] = []
        var offset = 0
        while offset < text.count {
            let length = min(Self.utf8Length(text[offset]), text.count - offset)
            symbols.append(Symbol(start: offset, length: length, previous: symbols.count - 1,
                                  next: offset + length == text.count ? -1 : symbols.count + 1))
            offset += length
        }
        var queue = PriorityQueue<Bigram>()
        var merges: [ArraySlice<UInt8>: (Int, Int)] = [:]
        func addBigram(_ left: Int, _ right: Int) {
            guard left >= 0, right >= 0 else { return }
            let slice = text[symbols[left].start..<(symbols[left].start + symbols[left].length + symbols[right].length)]
            guard let id = idsByPiece[Array(slice)] else { return }
            queue.push(Bigram(left: left, right: right, score: scores[Int(id)], length: slice.count))
            merges[slice] = (left, right)
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
            resegment(symbols[index], text: text, symbols: symbols, merges: merges, into: &output)
            index = symbols[index].next
        }
    }

    private func resegment(_ symbol: Symbol, text: [UInt8], symbols: [Symbol], merges: [ArraySlice<UInt8>: (Int, Int)], into output: inout [Int32]) {
        let slice = text[symbol.start..<(symbol.start + symbol.length)]
        if let id = idsByPiece[Array(slice)] {
            output.append(id)
        } else if let (left, right) = merges[slice] {
            resegment(symbols[left], text: text, symbols: symbols, merges: merges, into: &output)
            resegment(symbols[right], text: text, symbols: symbols, merges: merges, into: &output)
        } else {
            output += slice.map { byteTokens[Int($0)] }
        }
    }

    private static func utf8Length(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: 4
        case 0xE0...: 3
        case 0xC0...: 2
        default: 1
        }
    }

    // MARK: - Decoding

    /// The bytes a token stands for: spaces for `▁`, the byte of a byte token, nothing for control
    /// tokens (unless `showSpecial`).
    public func piece(_ id: Int32, showSpecial: Bool = false) -> [UInt8] {
        guard id >= 0, Int(id) < pieces.count else { return [] }
        switch kinds[Int(id)] {
        case .control, .unused:
            return showSpecial ? pieces[Int(id)] : []
        case .byte:
            return [Self.byteValue(pieces[Int(id)]) ?? 0]
        case .unknown:
            return Array("\u{2585}".utf8)
        case .normal, .userDefined:
            return Self.unescapeSpaces(pieces[Int(id)])
        }
    }

    /// The bytes of `ids`, as llama.cpp's `llama_detokenize` gives them: the space the tokenizer
    /// put in front is removed from the first token.
    public func decodeBytes(_ ids: [Int32], removeSpecial: Bool = false) -> [UInt8] {
        var ids = ids[...]
        var removeSpace = addsSpacePrefix
        if removeSpecial && addsBOS, ids.first == bos {
            removeSpace = false
            ids = ids.dropFirst()
        }
        var bytes: [UInt8] = []
        for id in ids {
            var piece = piece(id)[...]
            if removeSpace, piece.first == UInt8(ascii: " ") { piece = piece.dropFirst() }
            removeSpace = false
            bytes += piece
        }
        return bytes
    }

    /// The text of `ids` (invalid UTF-8 replaced by U+FFFD).
    public func decode(_ ids: [Int32], removeSpecial: Bool = false) -> String {
        String(decoding: decodeBytes(ids, removeSpecial: removeSpecial), as: UTF8.self)
    }

    private static func byteValue(_ piece: [UInt8]) -> UInt8? {
        guard piece.count == 6, piece.starts(with: Array("<0x".utf8)), piece.last == UInt8(ascii: ">") else { return nil }
        return UInt8(String(decoding: piece[3..<5], as: UTF8.self), radix: 16)
    }

    private static func unescapeSpaces(_ piece: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(piece.count)
        var index = 0
        while index < piece.count {
            if index + 2 < piece.count, piece[index] == 0xE2, piece[index + 1] == 0x96, piece[index + 2] == 0x81 {
                result.append(UInt8(ascii: " "))
                index += 3
            } else {
                result.append(piece[index])
                index += 1
            }
        }
        return result
    }
}
