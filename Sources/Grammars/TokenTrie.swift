/// A vocabulary's token texts as a byte trie laid out in depth-first order, built once per model:
/// walking it with a grammar visits each shared prefix once and skips a whole subtree as soon as
/// its prefix is refused. Tokens with no text (control tokens) are not in it; the tokens that end a
/// generation are kept aside, allowed only where the grammar may end.
public final class TokenTrie: Sendable {
    /// The number of token ids (the mask's length).
    public let vocabularySize: Int
    /// Tokens that end a generation.
    let endOfGeneration: [Int32]
    /// Per node in depth-first order (node 0 is the root): its byte, depth and the node after its
    /// subtree.
    let bytes: [UInt8]
    let depths: [UInt16]
    let subtreeEnds: [Int32]
    /// The tokens whose text ends at node n: `tokens[tokenStarts[n]..<tokenStarts[n + 1]]`.
    let tokenStarts: [Int32]
    let tokens: [Int32]
    /// The deepest node's depth.
    let maximumDepth: Int
    /// Each token's text: `pieceBytes[pieceStarts[id]..<pieceStarts[id + 1]]`.
    private let pieceBytes: [UInt8]
    private let pieceStarts: [Int32]

    /// The trie of `pieces`, each token's text (empty for a token that is not text: control and
    /// unknown tokens); `endOfGeneration` are the tokens that end a generation.
    public init(pieces: [[UInt8]], endOfGeneration: some Sequence<Int32>) {
        vocabularySize = pieces.count
        let ending = Set(endOfGeneration)
        self.endOfGeneration = ending.sorted()
        var flat: [UInt8] = []
        var starts: [Int32] = [0]
        for piece in pieces {
            flat += piece
            starts.append(Int32(flat.count))
        }
        pieceBytes = flat
        pieceStarts = starts

        let order = pieces.indices.filter { !pieces[$0].isEmpty && !ending.contains(Int32($0)) }
            .sorted { pieces[$0].lexicographicallyPrecedes(pieces[$1]) }
        var bytes: [UInt8] = [0]
        var depths: [UInt16] = [0]
        var subtreeEnds: [Int32] = [0]
        var tokenStarts: [Int32] = [0]
        var tokens: [Int32] = []
        // The nodes of the current path, root first.
        var path: [Int32] = [0]
        var previous: [UInt8] = []
        for id in order {
            let piece = pieces[id]
            let shared = zip(previous, piece).prefix { $0 == $1 }.count
            while path.count > shared + 1 {
                subtreeEnds[Int(path.removeLast())] = Int32(bytes.count)
            }
            for byte in piece[shared...] {
                path.append(Int32(bytes.count))
                bytes.append(byte)
                depths.append(UInt16(min(path.count - 1, Int(UInt16.max))))
                subtreeEnds.append(0)
                tokenStarts.append(Int32(tokens.count))
            }
            tokens.append(Int32(id))
            previous = piece
        }
        for node in path { subtreeEnds[Int(node)] = Int32(bytes.count) }
        tokenStarts.append(Int32(tokens.count))
        self.bytes = bytes
        self.depths = depths
        self.subtreeEnds = subtreeEnds
        self.tokenStarts = tokenStarts
        self.tokens = tokens
        maximumDepth = Int(depths.max() ?? 0)
    }

    /// The number of nodes, the root included.
    var nodeCount: Int { bytes.count }

    /// Token `id`'s text (empty when it is not text).
    func piece(_ id: Int32) -> ArraySlice<UInt8> {
        guard id >= 0, Int(id) < vocabularySize else { return [] }
        return pieceBytes[Int(pieceStarts[Int(id)])..<Int(pieceStarts[Int(id) + 1])]
    }

    /// Whether `id` ends a generation.
    func endsGeneration(_ id: Int32) -> Bool {
        endOfGeneration.contains(id)
    }
}
