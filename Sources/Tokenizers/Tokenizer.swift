import GGUF

/// Text to token ids and back, exactly as llama.cpp does it for the vocabulary's model:
/// special tokens matched in the text first, then SentencePiece or byte-level BPE on the text
/// between them; detokenization with special tokens shown or hidden and llama.cpp's space
/// handling.
public struct Tokenizer: Sendable {
    /// The vocabulary.
    public let vocabulary: Vocabulary

    private enum Encoder: Sendable {
        case sentencePiece(SentencePieceEncoder)
        case bytePair(BytePairEncoder)
        /// llama.cpp's test tokenizer over a vocabulary of this many tokens.
        case test(Int)
    }

    private let encoder: Encoder
    private let splitter: SpecialTokenSplitter
    /// Each token's bytes with special tokens shown (llama.cpp's `token_to_piece` cache).
    private let pieces: TokenLookup

    private static let spaceMarker = Array("▁".utf8)

    /// Reads the vocabulary of a GGUF file.
    public init(gguf: GGUFFile) throws(ModelError) {
        try self.init(vocabulary: Vocabulary(gguf: gguf), file: gguf.path)
    }

    /// A tokenizer for `vocabulary`; `file` names it in errors.
    public init(vocabulary: Vocabulary, file: String = "vocabulary") throws(ModelError) {
        self.vocabulary = vocabulary
        let lookup = vocabulary.lookup
        switch vocabulary.model {
        case .sentencePiece:
            var byteTokens: [Int32] = []
            for byte in 0...255 {
                let name = Array(Self.byteName(UInt8(byte)).utf8)
                guard let id = lookup.id(of: name) ?? lookup.id(of: [UInt8(byte)]) else {
                    throw ModelError(file: file, field: "tokenizer.ggml.tokens", reason: "has no token for byte 0x\(String(byte, radix: 16)) (byte fallback needs all 256)")
                }
                byteTokens.append(id)
            }
            encoder = .sentencePiece(SentencePieceEncoder(lookup: lookup, scores: vocabulary.scores, byteTokens: byteTokens))
        case .bytePair(let preTokenizer):
            encoder = .bytePair(BytePairEncoder(preTokenizer: preTokenizer, lookup: lookup, merges: vocabulary.merges))
        case .test:
            encoder = .test(vocabulary.count)
        }
        splitter = SpecialTokenSplitter(texts: lookup, attributes: vocabulary.attributes)
        pieces = TokenLookup((0..<vocabulary.count).map { Self.piece(of: $0, in: vocabulary) })
    }

    /// The bytes token `id` stands for with special tokens shown (`token_to_piece`, special = true).
    private static func piece(of id: Int, in vocabulary: Vocabulary) -> [UInt8] {
        if case .test = vocabulary.model { return Array(String(id, radix: 16).utf8) }
        let attributes = vocabulary.attributes[id]
        let text = Array(vocabulary.lookup.text(of: id))
        if !attributes.isDisjoint(with: TokenAttributes.special) { return text }
        if attributes.contains(.normal) {
            switch vocabulary.model {
            case .sentencePiece: return unescapeSpaces(text)
            case .bytePair(let preTokenizer): return preTokenizer.escapesSpaces ? unescapeSpaces(text) : ByteLevelEncoding.decode(text)
            case .test: return text
            }
        }
        if attributes.contains(.byte), text.count == 6, let byte = UInt8(String(decoding: text[3..<5], as: UTF8.self), radix: 16) {
            return [byte]
        }
        return []
    }

    /// The number of tokens.
    public var vocabularySize: Int { vocabulary.count }

    /// The tokens a prompt starts with when special tokens are added (BOS, if the vocabulary adds it).
    public var promptPrefix: [Int32] {
        vocabulary.addsBOS ? vocabulary.bos.map { [$0] } ?? [] : []
    }

    /// Whether `id` ends a generation (EOS, end of turn, …).
    public func isEndOfGeneration(_ id: Int32) -> Bool { vocabulary.endOfGeneration.contains(id) }

    // MARK: - Encoding

    /// Token ids for `text`.
    ///
    /// - Parameters:
    ///   - addSpecial: add BOS/EOS as the vocabulary says.
    ///   - parseSpecial: turn control tokens written in the text (`<|im_start|>`) into their ids;
    ///     user-defined tokens are always matched.
    public func encode(_ text: String, addSpecial: Bool = true, parseSpecial: Bool = true) -> [Int32] {
        encode(bytes: Array(text.utf8), addSpecial: addSpecial, parseSpecial: parseSpecial)
    }

    /// Token ids for UTF-8 `bytes` (invalid sequences are read as U+FFFD, as llama.cpp reads them).
    public func encode(bytes: [UInt8], addSpecial: Bool = true, parseSpecial: Bool = true) -> [Int32] {
        var output: [Int32] = []
        if addSpecial { output += promptPrefix }
        var previousWasSpecial = true
        for fragment in splitter.split(bytes, parseSpecial: parseSpecial) {
            switch fragment {
            case .token(let id):
                output.append(id)
                previousWasSpecial = true
            case .text(let range):
                switch encoder {
                case .sentencePiece(let sentencePiece):
                    var escaped: [UInt8] = vocabulary.addsSpacePrefix && previousWasSpecial ? Self.spaceMarker : []
                    escaped.reserveCapacity(range.count + 8)
                    for byte in bytes[range] {
                        if byte == UInt8(ascii: " ") { escaped += Self.spaceMarker } else { escaped.append(byte) }
                    }
                    sentencePiece.encode(escaped, into: &output)
                case .bytePair(let bytePair):
                    bytePair.encode(bytes[range], into: &output)
                case .test(let count):
                    Self.encodeTest(bytes[range], vocabularySize: count, into: &output)
                }
                previousWasSpecial = false
            }
        }
        if addSpecial, vocabulary.addsEOS, let eos = vocabulary.eos { output.append(eos) }
        return output
    }

    /// llama.cpp's test tokenizer: each run of up to five bytes hashed (`hash * 31 + byte`, in 64
    /// bits) to the id `hash % vocabularySize`.
    private static func encodeTest(_ bytes: ArraySlice<UInt8>, vocabularySize: Int, into output: inout [Int32]) {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = min(start + 5, bytes.endIndex)
            let hash = bytes[start..<end].reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) }
            output.append(Int32(hash % UInt64(vocabularySize)))
            start = end
        }
    }

    // MARK: - Decoding

    /// The bytes token `id` stands for; control and unknown tokens are empty unless `showSpecial`.
    public func piece(_ id: Int32, showSpecial: Bool = false) -> [UInt8] {
        guard id >= 0, Int(id) < vocabulary.count else { return [] }
        if !showSpecial, !vocabulary.attributes[Int(id)].isDisjoint(with: TokenAttributes.hidden) { return [] }
        return Array(pieces.text(of: Int(id)))
    }

    /// Token `id`'s text as a label (a tensor's position, a lens's prediction): its text when
    /// it is whole UTF-8 characters, else each byte as `<0x..>` (never "�").
    public func textPiece(_ id: Int32) -> String {
        let bytes = piece(id)
        return String(validating: bytes, as: UTF8.self) ?? bytes.map(Self.byteName).joined()
    }

    /// `<0xE2>`: a byte as llama.cpp's vocabularies write byte tokens.
    static func byteName(_ byte: UInt8) -> String {
        "<0x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) + ">"
    }

    /// Token `id` for people to read: special and byte tokens as written in the vocabulary
    /// (`<|im_end|>`, `<0x0A>`), spaces as `·`, line breaks and tabs as `\n` and `\t`, and bytes
    /// that are not whole UTF-8 characters as `<0x..>`.
    public func visiblePiece(_ id: Int32) -> String {
        guard id >= 0, Int(id) < vocabulary.count else { return "<invalid \(id)>" }
        let attributes = vocabulary.attributes[Int(id)]
        if attributes.contains(.byte) || !attributes.isDisjoint(with: TokenAttributes.special) {
            return String(decoding: vocabulary.text(of: id), as: UTF8.self)
        }
        let bytes = piece(id, showSpecial: true)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return bytes.map(Self.byteName).joined()
        }
        var visible = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case " ": visible += "·"
            case "\n": visible += "\\n"
            case "\t": visible += "\\t"
            default: visible.unicodeScalars.append(scalar)
            }
        }
        return visible
    }

    /// The bytes of `ids`, as llama.cpp's `llama_detokenize` gives them: the space a SentencePiece
    /// tokenizer put in front is removed from the first token (unless `removeSpecial` drops a
    /// leading BOS), special tokens are shown only with `showSpecial`, and vocabularies that ask
    /// for it get their spaces before punctuation cleaned up.
    public func decodeBytes(_ ids: [Int32], removeSpecial: Bool = false, showSpecial: Bool = false) -> [UInt8] {
        var ids = ids[...]
        var removeSpace = vocabulary.addsSpacePrefix
        if removeSpecial, vocabulary.addsBOS, let bos = vocabulary.bos, ids.first == bos {
            removeSpace = false
            ids = ids.dropFirst()
        }
        if removeSpecial, vocabulary.addsEOS, let eos = vocabulary.eos, ids.last == eos {
            ids = ids.dropLast()
        }
        var bytes: [UInt8] = []
        for id in ids {
            var piece = piece(id, showSpecial: showSpecial)[...]
            if removeSpace, piece.first == UInt8(ascii: " ") { piece = piece.dropFirst() }
            removeSpace = false
            bytes += piece
        }
        return vocabulary.cleansSpaces ? Self.cleanSpaces(bytes) : bytes
    }

    /// The text of `ids` (invalid UTF-8 replaced by U+FFFD).
    public func decode(_ ids: [Int32], removeSpecial: Bool = false, showSpecial: Bool = false) -> String {
        String(decoding: decodeBytes(ids, removeSpecial: removeSpecial, showSpecial: showSpecial), as: UTF8.self)
    }

    /// `clean_up_tokenization_spaces` as llama.cpp applies it: no space before `?!.,`, none around
    /// a lone apostrophe, none before `'s`, `'m`, `'re`, `'ve`.
    static func cleanSpaces(_ text: [UInt8]) -> [UInt8] {
        let space = UInt8(ascii: " "), apostrophe = UInt8(ascii: "'")
        var first: [UInt8] = []
        first.reserveCapacity(text.count)
        for (index, byte) in text.enumerated() {
            if index > 0, text[index - 1] == space, [UInt8(ascii: "?"), UInt8(ascii: "!"), UInt8(ascii: "."), UInt8(ascii: ",")].contains(byte) {
                first.removeLast()
            }
            first.append(byte)
        }
        // A skipped space is overwritten with NUL, as llama.cpp's in-place pass does.
        var source = first
        var second: [UInt8] = []
        second.reserveCapacity(first.count)
        var index = 0
        while index < source.count {
            let byte = source[index]
            if index > 0, byte == apostrophe, index + 1 < source.count, source[index - 1] == space, source[index + 1] == space {
                second.removeLast()
                second.append(byte)
                source[index + 1] = 0
                index += 2
                continue
            }
            second.append(byte)
            index += 1
        }
        var third: [UInt8] = []
        third.reserveCapacity(second.count)
        for (index, byte) in second.enumerated() {
            if index > 0, second[index - 1] == space, byte == apostrophe, index + 1 < second.count {
                let next = second[index + 1]
                let afterNext: UInt8? = index + 2 < second.count ? second[index + 2] : nil
                let contraction = next == UInt8(ascii: "s") || next == UInt8(ascii: "m")
                    || (afterNext == UInt8(ascii: "e") && (next == UInt8(ascii: "r") || next == UInt8(ascii: "v")))
                if contraction { third.removeLast() }
            }
            third.append(byte)
        }
        return third
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
