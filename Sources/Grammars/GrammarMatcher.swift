/// A grammar following one generation token by token: which tokens may come next (a mask over the
/// vocabulary, or a check of one token), and the state after each token taken. Tokens that span
/// grammar elements, and characters split across tokens, are followed exactly; the tokens that end
/// a generation are allowed only where the grammar may end. A value: a copy follows its own
/// output (a forked generation).
public struct GrammarMatcher: Sendable {
    private var automaton: GrammarAutomaton
    private let trie: TokenTrie
    private var state: Int32
    /// The character the output so far ends inside, if it does.
    private var prefix = UTF8Prefix()
    /// Masks already computed, by state and prefix.
    private var masks: [UInt64: [UInt64]] = [:]
    /// The bytes the cached masks hold, kept under `maskCacheLimit`.
    private var maskBytes = 0
    private static let maskCacheLimit = 256 << 20

    /// Follows `grammar` over the tokens of `trie`.
    public init(_ grammar: Grammar, trie: TokenTrie) {
        automaton = GrammarAutomaton(grammar)
        self.trie = trie
        state = automaton.initial
    }

    /// Why the grammar can no longer be followed, once following it crossed one of its
    /// `GrammarLimits` (then no token is allowed).
    public var overrun: String? { automaton.overrun }

    /// Whether the output so far is a whole sentence of the grammar, so the generation may end.
    public var canEnd: Bool { prefix.isEmpty && automaton.accepts(state) }

    /// Whether the output must end here: it may, and nothing can follow.
    public var isComplete: Bool { prefix.isEmpty && automaton.isComplete(state) }

    /// Whether `token` may come next.
    public mutating func allows(_ token: Int32) -> Bool {
        state(after: token).map { $0.state != GrammarAutomaton.dead } ?? canEnd
    }

    /// Takes `token` as the next one of the output. Returns false, changing nothing, when the
    /// grammar does not allow it.
    @discardableResult
    public mutating func accept(_ token: Int32) -> Bool {
        guard let (next, nextPrefix) = state(after: token) else { return canEnd }
        guard next != GrammarAutomaton.dead else { return false }
        state = next
        prefix = nextPrefix
        automaton.beginToken()
        return true
    }

    /// The state and character prefix after `token`; nil for a token that ends the generation.
    private mutating func state(after token: Int32) -> (state: Int32, prefix: UTF8Prefix)? {
        if trie.endsGeneration(token) { return nil }
        var byToken = GrammarAutomaton.dead
        if prefix.isEmpty, automaton.hasTokenTops(state) { byToken = automaton.next(state, token: token) }
        let piece = trie.piece(token)
        guard !piece.isEmpty else { return (byToken, UTF8Prefix()) }
        var current = state
        var partial = prefix
        for byte in piece {
            switch partial.adding(byte) {
            case .character(let code):
                current = automaton.next(current, code)
                partial = UTF8Prefix()
                if current == GrammarAutomaton.dead { return (byToken, UTF8Prefix()) }
            case .prefix(let longer):
                partial = longer
            case .invalid:
                return (byToken, UTF8Prefix())
            }
        }
        if !partial.isEmpty, !automaton.canFinish(partial, in: current) {
            return (byToken, UTF8Prefix())
        }
        if byToken != GrammarAutomaton.dead {
            // Taken both whole and as text: only when its text ends on a character boundary can the
            // two states merge.
            guard partial.isEmpty else { return (byToken, UTF8Prefix()) }
            return (automaton.union(byToken, current), partial)
        }
        return (current, partial)
    }

    /// The tokens that may come next, as bits (token t is bit t % 64 of word t / 64).
    public mutating func allowedTokens() -> [UInt64] {
        let key = UInt64(UInt32(bitPattern: state)) << 32 | UInt64(prefix.packed)
        if let known = masks[key] { return known }
        let mask = computeMask()
        if maskBytes + mask.count * 8 <= Self.maskCacheLimit {
            masks[key] = mask
            maskBytes += mask.count * 8
        }
        return mask
    }

    /// Sets the logits of every token the grammar does not allow next to -infinity. Returns
    /// false when no token is allowed.
    public mutating func mask(_ logits: UnsafeMutableBufferPointer<Float>) -> Bool {
        let allowed = allowedTokens()
        var any = false
        for index in 0..<logits.count {
            if index < trie.vocabularySize, allowed[index >> 6] & (1 << UInt64(index & 63)) != 0 {
                any = true
            } else {
                logits[index] = -.infinity
            }
        }
        return any
    }

    /// Walks the trie from the current state, skipping every subtree whose prefix the grammar
    /// refuses.
    private mutating func computeMask() -> [UInt64] {
        var mask = [UInt64](repeating: 0, count: (trie.vocabularySize + 63) / 64)
        func allow(_ token: Int32) { mask[Int(token) >> 6] |= 1 << UInt64(token & 63) }
        if canEnd { trie.endOfGeneration.forEach(allow) }
        if prefix.isEmpty {
            for (token, negated) in automaton.tokenTops(state) {
                if negated {
                    for other in 0..<Int32(trie.vocabularySize) where other != token && !trie.endsGeneration(other) { allow(other) }
                } else if token >= 0, Int(token) < trie.vocabularySize, !trie.endsGeneration(token) {
                    allow(token)
                }
            }
        }
        var states = [Int32](repeating: 0, count: trie.maximumDepth + 1)
        var prefixes = [UTF8Prefix](repeating: UTF8Prefix(), count: trie.maximumDepth + 1)
        states[0] = state
        prefixes[0] = prefix
        let trie = self.trie
        trie.bytes.withUnsafeBufferPointer { bytes in
        trie.depths.withUnsafeBufferPointer { depths in
        trie.subtreeEnds.withUnsafeBufferPointer { subtreeEnds in
        trie.tokenStarts.withUnsafeBufferPointer { tokenStarts in
        trie.tokens.withUnsafeBufferPointer { tokens in
        mask.withUnsafeMutableBufferPointer { mask in
        states.withUnsafeMutableBufferPointer { states in
        prefixes.withUnsafeMutableBufferPointer { prefixes in
            var node = 1
            while node < bytes.count {
                let depth = Int(depths[node])
                let parent = states[depth - 1]
                let before = prefixes[depth - 1]
                let byte = bytes[node]
                var next: Int32
                var nextPrefix = UTF8Prefix()
                if before.isEmpty, byte < 0x80 {
                    next = automaton.next(parent, UInt32(byte))
                } else {
                    switch before.adding(byte) {
                    case .character(let code):
                        next = automaton.next(parent, code)
                    case .prefix(let longer):
                        nextPrefix = longer
                        next = automaton.canFinish(longer, in: parent) ? parent : GrammarAutomaton.dead
                    case .invalid:
                        next = GrammarAutomaton.dead
                    }
                }
                if next == GrammarAutomaton.dead {
                    node = Int(subtreeEnds[node])
                    continue
                }
                states[depth] = next
                prefixes[depth] = nextPrefix
                for index in Int(tokenStarts[node])..<Int(tokenStarts[node + 1]) {
                    let token = tokens[index]
                    mask[Int(token) >> 6] |= 1 << UInt64(token & 63)
                }
                node += 1
            }
        }}}}}}}}
        return mask
    }
}
