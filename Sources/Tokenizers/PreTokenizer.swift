/// How a byte-pair vocabulary splits text into words before merging, chosen by the GGUF key
/// `tokenizer.ggml.pre` as llama.cpp chooses it: the split rules applied in turn (each splits the
/// pieces the previous one left, keeping the text between matches as pieces of their own) and the
/// vocabulary flags that go with the name.
public struct PreTokenizer: Sendable {
    /// The `tokenizer.ggml.pre` values that select this pre-tokenizer.
    public let names: [String]
    let rules: [SplitRule]
    /// Whether a word that is a token as a whole is taken as it is, without merging.
    let ignoresMerges: Bool
    /// Whether detokenization removes the space before `?!.,` and some contractions
    /// (`clean_up_tokenization_spaces`).
    let cleansSpaces: Bool
    /// Whether BOS is added unless `tokenizer.ggml.add_bos_token` says otherwise.
    let addsBOSByDefault: Bool
    /// SentencePiece-style BPE (Gemma 4): spaces become ▁ before splitting, merges run on the
    /// text's characters rather than on GPT-2's byte code points, a piece that is not a token is
    /// written as `<0xXX>` byte tokens, a word of line feeds that is a token is taken whole, and
    /// ▁ reads back as a space.
    let escapesSpaces: Bool

    /// Every pre-tokenizer Lumen knows, with the names llama.cpp gives them.
    public static let all: [PreTokenizer] = [
        PreTokenizer(names: ["default"], rules: [
            .run(CodepointSet(classes: .punctuation, ranges: "$+<=>^~|")), .gpt2, .numbers(maxRun: .max), .asciiDigitTriple,
        ]),
        PreTokenizer(names: ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"],
                     rules: [.llama3(maxDigits: 3)], ignoresMerges: true, addsBOSByDefault: true),
        PreTokenizer(names: ["dbrx", "smaug-bpe"], rules: [.llama3(maxDigits: 3)]),
        PreTokenizer(names: ["qwen2", "deepseek-r1-qwen"], rules: [.llama3(maxDigits: 1)], cleansSpaces: false),
        PreTokenizer(names: ["stablelm2", "megrez"], rules: [.llama3(maxDigits: 1)]),
        PreTokenizer(names: ["gemma4"], rules: [.lineFeedRuns], addsBOSByDefault: true, escapesSpaces: true),
        PreTokenizer(names: ["qwen35"], rules: [.llama3(maxDigits: 1, marksAreLetters: true)], cleansSpaces: false),
        PreTokenizer(names: ["gpt-4o", "llama4", "kanana2", "talkie"], rules: [.gpt4o], cleansSpaces: false),
        PreTokenizer(names: ["gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
                             "mellum", "mpt", "olmo", "jais", "exaone4"], rules: [.gpt2]),
        PreTokenizer(names: ["smollm", "command-r"], rules: [.numbers(maxRun: 1), .gpt2], cleansSpaces: false),
        PreTokenizer(names: ["starcoder", "refact", "codeshell", "exaone", "minerva-7b"], rules: [.numbers(maxRun: 1), .gpt2]),
        PreTokenizer(names: ["falcon"], rules: [
            .run(CodepointSet(classes: .punctuation, ranges: "$+<=>^~|`")), .gpt2, .asciiDigitTriple,
        ]),
        PreTokenizer(names: ["deepseek-llm"], rules: [
            .lineBreak,
            .optionalSpaceThenRun(CodepointSet(ranges: "A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}")),
            .optionalSpaceThenRun(CodepointSet(ranges: "!-/:-~\u{FF01}-\u{FF0F}\u{FF1A}-\u{FF5E}\u{2018}-\u{201F}\u{3000}-\u{3002}")),
            .trailingWhitespace,
            .run(CodepointSet(ranges: "\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}")),
            .numbers(maxRun: .max),
        ], cleansSpaces: false),
        PreTokenizer(names: ["deepseek-coder"], rules: [
            .lineBreak,
            .optionalSpaceThenRun(CodepointSet(classes: .letter)),
            .optionalSpaceThenRun(CodepointSet(classes: .punctuation)),
            .run(CodepointSet(ranges: "\u{4E00}-\u{9FA5}\u{800}-\u{4E00}\u{AC00}-\u{D7FF}")),
            .numbers(maxRun: 1),
        ], cleansSpaces: false),
    ]

    private init(names: [String], rules: [SplitRule], ignoresMerges: Bool = false, cleansSpaces: Bool = true,
                 addsBOSByDefault: Bool = false, escapesSpaces: Bool = false) {
        self.names = names
        self.rules = rules
        self.ignoresMerges = ignoresMerges
        self.cleansSpaces = cleansSpaces
        self.addsBOSByDefault = addsBOSByDefault
        self.escapesSpaces = escapesSpaces
    }

    /// The pre-tokenizer `tokenizer.ggml.pre` names.
    public static func named(_ name: String) -> PreTokenizer? {
        all.first { $0.names.contains(name) }
    }

    /// The words of `text` (code points), as ranges into it.
    func words(_ text: [UInt32]) -> [Range<Int>] {
        var pieces = [0..<text.count]
        guard !text.isEmpty else { return [] }
        text.withUnsafeBufferPointer { buffer in
            for rule in rules {
                var split: [Range<Int>] = []
                split.reserveCapacity(pieces.count * 2)
                for piece in pieces {
                    var gapStart = piece.lowerBound
                    var position = piece.lowerBound
                    while position < piece.upperBound {
                        let length = rule.match(buffer, at: position, end: piece.upperBound)
                        if length > 0 {
                            if position > gapStart { split.append(gapStart..<position) }
                            split.append(position..<(position + length))
                            position += length
                            gapStart = position
                        } else {
                            position += max(1, -length)
                        }
                    }
                    if piece.upperBound > gapStart { split.append(gapStart..<piece.upperBound) }
                }
                pieces = split
            }
        }
        return pieces
    }
}
