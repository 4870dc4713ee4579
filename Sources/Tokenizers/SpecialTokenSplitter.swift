/// Splits text around the special tokens written in it, exactly as llama.cpp's
/// `tokenizer_st_partition` does: tokens are taken longest first, each at its leftmost
/// non-overlapping occurrences in the text not yet taken, with the whitespace that a
/// left- or right-stripping token removes.
///
/// One scan over the text with a trie finds every occurrence of every special token, so the
/// cost grows with the text, not with text × number of special tokens.
struct SpecialTokenSplitter: Sendable {
    /// A piece of split text: bytes to tokenize, or a special token.
    enum Fragment: Equatable {
        case text(Range<Int>)
        case token(Int32)
    }

    private struct Special: Sendable {
        let length: Int
        let id: Int32
        let attributes: TokenAttributes
    }

    /// The special tokens in the order they are taken: longest first, then by id.
    private let specials: [Special]
    /// Trie: the child of the root by byte, then children by (node << 8 | byte).
    private let rootChildren: [Int32]
    private let children: [UInt64: Int32]
    /// The special (index into `specials`) a trie node completes, or -1.
    private let terminal: [Int32]

    /// Indexes the tokens of `vocabulary` that have any of `TokenAttributes.special`.
    init(texts: TokenLookup, attributes: [TokenAttributes]) {
        let ids = attributes.indices.filter { !attributes[$0].isDisjoint(with: TokenAttributes.special) && !texts.text(of: $0).isEmpty }
        let ordered = ids.sorted { lhs, rhs in
            let lengths = (texts.text(of: lhs).count, texts.text(of: rhs).count)
            return lengths.0 != lengths.1 ? lengths.0 > lengths.1 : lhs < rhs
        }
        specials = ordered.map { Special(length: texts.text(of: $0).count, id: Int32($0), attributes: attributes[$0]) }
        var rootChildren = [Int32](repeating: -1, count: 256)
        var children: [UInt64: Int32] = [:]
        var terminal: [Int32] = [-1]
        for (index, id) in ordered.enumerated() {
            var node: Int32 = 0
            for byte in texts.text(of: id) {
                let next: Int32?
                if node == 0 {
                    next = rootChildren[Int(byte)] >= 0 ? rootChildren[Int(byte)] : nil
                } else {
                    next = children[UInt64(node) << 8 | UInt64(byte)]
                }
                if let next {
                    node = next
                } else {
                    let created = Int32(terminal.count)
                    terminal.append(-1)
                    if node == 0 { rootChildren[Int(byte)] = created } else { children[UInt64(node) << 8 | UInt64(byte)] = created }
                    node = created
                }
            }
            if terminal[Int(node)] < 0 { terminal[Int(node)] = Int32(index) }
        }
        self.rootChildren = rootChildren
        self.children = children
        self.terminal = terminal
    }

    /// The fragments of `bytes`. Control and unknown tokens are matched only when `parseSpecial`;
    /// user-defined tokens always are.
    func split(_ bytes: [UInt8], parseSpecial: Bool) -> [Fragment] {
        guard !bytes.isEmpty else { return [] }
        // Every occurrence, as (special index, position), in the order llama.cpp takes them.
        var occurrences: [(special: Int32, position: Int32)] = []
        for start in bytes.indices {
            var node = rootChildren[Int(bytes[start])]
            var index = start + 1
            while node >= 0 {
                let special = terminal[Int(node)]
                if special >= 0, parseSpecial || specials[Int(special)].attributes.isDisjoint(with: TokenAttributes.hidden) {
                    occurrences.append((special, Int32(start)))
                }
                guard index < bytes.count, let next = children[UInt64(node) << 8 | UInt64(bytes[index])] else { break }
                node = next
                index += 1
            }
        }
        guard !occurrences.isEmpty else { return [.text(0..<bytes.count)] }
        occurrences.sort { $0.special != $1.special ? $0.special < $1.special : $0.position < $1.position }

        // Per byte: raw text (-1), removed whitespace (-2), inside a token (-3) or a token's id.
        let raw: Int32 = -1, removed: Int32 = -2, inside: Int32 = -3
        var state = [Int32](repeating: raw, count: bytes.count)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        for occurrence in occurrences {
            let special = specials[Int(occurrence.special)]
            let start = Int(occurrence.position), end = start + special.length
            guard state[start..<end].allSatisfy({ $0 == raw }) else { continue }
            state[start] = special.id
            for index in (start + 1)..<end { state[index] = inside }
            if special.attributes.contains(.leftStrip) {
                var index = start - 1
                while index >= 0, state[index] == raw, isSpace(bytes[index]) { state[index] = removed; index -= 1 }
            }
            if special.attributes.contains(.rightStrip) {
                var index = end
                while index < bytes.count, state[index] == raw, isSpace(bytes[index]) { state[index] = removed; index += 1 }
            }
        }

        var fragments: [Fragment] = []
        var textStart = -1
        for index in bytes.indices {
            let value = state[index]
            if value == raw {
                if textStart < 0 { textStart = index }
                continue
            }
            if textStart >= 0 { fragments.append(.text(textStart..<index)); textStart = -1 }
            if value >= 0 { fragments.append(.token(value)) }
        }
        if textStart >= 0 { fragments.append(.text(textStart..<bytes.count)) }
        return fragments
    }
}
