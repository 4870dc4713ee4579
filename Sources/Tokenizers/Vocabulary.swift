import GGUF

/// A model's vocabulary as llama.cpp reads it from GGUF metadata: token texts, scores and
/// attributes, the special tokens, the flags that steer tokenization, and the tokens that end a
/// generation.
public struct Vocabulary: Sendable {
    /// The tokenization algorithm (`tokenizer.ggml.model`).
    public enum Model: Sendable {
        /// SentencePiece (`llama`): best-score merges with byte fallback.
        case sentencePiece
        /// Byte-level BPE (`gpt2`) with its pre-tokenizer.
        case bytePair(PreTokenizer)
        /// llama.cpp's tokenizer for its random-weight test models (`test`): text in chunks of
        /// five bytes, each hashed to an id; a token reads as its id in hexadecimal.
        case test
    }

    /// The tokenization algorithm.
    public let model: Model
    /// Token texts and ids by text.
    let lookup: TokenLookup
    /// Merge scores, by id (SentencePiece).
    let scores: [Float]
    /// Attributes, by id.
    public let attributes: [TokenAttributes]
    /// The beginning-of-sequence token.
    public let bos: Int32?
    /// The end-of-sequence token.
    public let eos: Int32?
    /// The end-of-turn token (`<|eot_id|>`, `<|im_end|>`, `<end_of_turn>`, …).
    public let eot: Int32?
    /// Whether tokenizing with special tokens adds BOS in front.
    public let addsBOS: Bool
    /// Whether tokenizing with special tokens adds EOS at the end.
    public let addsEOS: Bool
    /// Whether a space is put before text that starts the input or follows a special token.
    public let addsSpacePrefix: Bool
    /// Whether detokenization removes spaces before punctuation (`clean_up_tokenization_spaces`).
    public let cleansSpaces: Bool
    /// The tokens that end a generation.
    public let endOfGeneration: Set<Int32>
    /// The BPE merges (`tokenizer.ggml.merges`), for byte-pair vocabularies.
    let merges: [[UInt8]]

    /// The number of tokens.
    public var count: Int { attributes.count }

    /// The algorithm for people: `SentencePiece` or `BPE (qwen2)`.
    public var kindDescription: String {
        switch model {
        case .sentencePiece: "SentencePiece"
        case .bytePair(let preTokenizer): "BPE (\(preTokenizer.names[0]))"
        case .test: "test (ids in hexadecimal)"
        }
    }

    /// The raw text of token `id` as the vocabulary stores it (`▁` or GPT-2 code points included).
    public func text(of id: Int32) -> [UInt8] {
        guard id >= 0, Int(id) < count else { return [] }
        return Array(lookup.text(of: Int(id)))
    }

    /// The token whose raw text is `text`, if the vocabulary has one.
    public func id(of text: some Collection<UInt8>) -> Int32? { lookup.id(of: text) }

    /// Reads the vocabulary of a GGUF file.
    public init(gguf: GGUFFile) throws(ModelError) {
        let file = gguf.path
        let metadata = gguf.metadata
        func error(_ key: String, _ reason: String) -> ModelError { ModelError(file: file, field: key, reason: reason) }

        let modelName = metadata["tokenizer.ggml.model"]?.stringValue
        var bos: Int32?, eos: Int32?
        var addsBOS: Bool, addsSpacePrefix: Bool, cleansSpaces: Bool
        var merges: [[UInt8]] = []
        switch modelName {
        case "llama":
            model = .sentencePiece
            (bos, eos) = (1, 2)
            (addsBOS, addsSpacePrefix, cleansSpaces) = (true, true, false)
        case "gpt2", "gemma4":
            // Gemma 4's files name their pre-tokenizer by the model, as llama.cpp reads them.
            let preName = modelName == "gemma4" ? "gemma4" : metadata["tokenizer.ggml.pre"]?.stringValue ?? "default"
            guard let preTokenizer = PreTokenizer.named(preName) else {
                let known = PreTokenizer.all.flatMap(\.names).sorted().joined(separator: ", ")
                throw error("tokenizer.ggml.pre", "pre-tokenizer \"\(preName)\" is not supported (supported: \(known))")
            }
            model = .bytePair(preTokenizer)
            (bos, eos) = modelName == "gemma4" ? (nil, nil) : (11, 11)
            (addsBOS, addsSpacePrefix, cleansSpaces) = (preTokenizer.addsBOSByDefault, false, preTokenizer.cleansSpaces)
            guard let lines = metadata["tokenizer.ggml.merges"]?.arrayValue else {
                throw error("tokenizer.ggml.merges", "is missing (a BPE vocabulary needs its merges)")
            }
            for (index, line) in lines.enumerated() {
                guard let text = line.stringValue else { throw error("tokenizer.ggml.merges[\(index)]", "is not a string") }
                merges.append(Array(text.utf8))
            }
        case "test":
            model = .test
            (addsBOS, addsSpacePrefix, cleansSpaces) = (false, false, false)
        default:
            throw error("tokenizer.ggml.model", modelName.map {
                "tokenizer \"\($0)\" is not supported (only \"llama\", SentencePiece, \"gpt2\", byte-level BPE, \"gemma4\", and llama.cpp's \"test\" are)"
            } ?? "is missing")
        }
        self.merges = merges

        guard let tokens = metadata["tokenizer.ggml.tokens"]?.arrayValue, !tokens.isEmpty else {
            throw error("tokenizer.ggml.tokens", "is missing or empty")
        }
        var texts: [[UInt8]] = []
        texts.reserveCapacity(tokens.count)
        for (id, token) in tokens.enumerated() {
            guard let text = token.stringValue else { throw error("tokenizer.ggml.tokens[\(id)]", "is not a string") }
            texts.append(text.isEmpty ? Array("[EMPTY_\(id)]".utf8) : Array(text.utf8))
        }
        let lookup = TokenLookup(texts)
        for (id, text) in texts.enumerated() where lookup.id(of: text) != Int32(id) {
            throw error("tokenizer.ggml.tokens[\(id)]", "duplicates token \(lookup.id(of: text) ?? -1) (\"\(String(decoding: text, as: UTF8.self))\")")
        }
        self.lookup = lookup
        let count = texts.count

        if let values = metadata["tokenizer.ggml.scores"]?.arrayValue {
            guard values.count >= count else { throw error("tokenizer.ggml.scores", "has \(values.count) entries for \(count) tokens") }
            scores = values.prefix(count).map { Float($0.doubleValue ?? 0) }
        } else {
            scores = Array(repeating: 0, count: count)
        }
        var attributes: [TokenAttributes]
        if let values = metadata["tokenizer.ggml.token_type"]?.arrayValue {
            guard values.count >= count else { throw error("tokenizer.ggml.token_type", "has \(values.count) entries for \(count) tokens") }
            attributes = values.prefix(count).map { TokenAttributes(ggufTokenType: $0.intValue ?? 0) }
        } else {
            attributes = Array(repeating: .normal, count: count)
        }

        // Special token ids: defaults that fit the vocabulary, then the file's own.
        func tokenID(_ key: String, default value: Int32?) -> Int32? {
            let fallback = value.flatMap { $0 < count ? $0 : nil }
            guard let raw = metadata["tokenizer.ggml.\(key)"]?.intValue else { return fallback }
            return raw >= 0 && raw < count ? Int32(raw) : fallback
        }
        bos = tokenID("bos_token_id", default: bos)
        eos = tokenID("eos_token_id", default: eos)
        var eot = tokenID("eot_token_id", default: nil)
        var eom = tokenID("eom_token_id", default: nil)
        var fill = ["fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep"].map { tokenID("\($0)_token_id", default: nil) }
        func flag(_ key: String) -> Bool? {
            if case .bool(let value)? = metadata["tokenizer.ggml.\(key)"] { return value }
            return nil
        }
        // llama.cpp adds BOS to Gemma 4 prompts whatever the file says (its pull request 21500).
        addsBOS = modelName == "gemma4" ? true : flag("add_bos_token") ?? addsBOS
        let addsEOS = flag("add_eos_token") ?? false
        addsSpacePrefix = flag("add_space_prefix") ?? addsSpacePrefix
        if addsBOS, bos == nil { throw error("tokenizer.ggml.add_bos_token", "is true, but there is no BOS token") }
        if addsEOS, eos == nil { throw error("tokenizer.ggml.add_eos_token", "is true, but there is no EOS token") }

        // Tokens recognised by their text, as llama.cpp recognises them; each becomes a control token.
        let rules = Self.recognisedTokens
        for id in 0..<count {
            let text = texts[id]
            var recognised = false
            if eot == nil, rules.endOfTurn.contains(text) { eot = Int32(id); recognised = true }
            if eom == nil, rules.endOfMessage.contains(text) { eom = Int32(id); recognised = true }
            for (slot, names) in rules.fill.enumerated() where fill[slot] == nil && names.contains(text) {
                fill[slot] = Int32(id)
                recognised = true
            }
            if recognised { attributes[id].insert(.control) }
        }
        for id in 0..<count where attributes[id].contains(.control) && texts[id].contains(subsequence: Array("unused".utf8)) {
            attributes[id].insert(.unused)
        }
        var endOfGeneration = Set(fill[3...].compactMap { $0 })
        for id in 0..<count where rules.endOfGeneration.contains(texts[id]) {
            endOfGeneration.insert(Int32(id))
            attributes[id].insert(.control)
        }
        for id in 0..<count where rules.alwaysShown.contains(texts[id]) { attributes[id] = .userDefined }
        endOfGeneration.formUnion([eos, eot, eom].compactMap { $0 })
        // gpt-oss and Solar Open end a message with <|end|> but not the generation.
        let eogTexts = Set(endOfGeneration.map { texts[Int($0)] })
        let harmony = [["<|return|>", "<|call|>"], ["<|calls|>", "<|flush|>"]].contains { $0.allSatisfy { eogTexts.contains(Array($0.utf8)) } }
        if harmony, let end = lookup.id(of: Array("<|end|>".utf8)), endOfGeneration.contains(end) {
            endOfGeneration.remove(end)
            attributes[Int(end)] = .userDefined
        }
        if eogTexts.contains(Array("<|tool_response>".utf8)), let end = lookup.id(of: Array("</s>".utf8)), endOfGeneration.contains(end) {
            endOfGeneration.remove(end)
            attributes[Int(end)] = .normal
        }
        // Phi-3 strips whitespace after its special tokens (by model name, as llama.cpp does).
        let name = (metadata["general.name"]?.stringValue ?? "").lowercased()
        if name.contains("phi-3") || name.contains("phi3") {
            for id in 0..<count where !attributes[id].isDisjoint(with: TokenAttributes.special) { attributes[id].insert(.rightStrip) }
            for (text, strips) in [("</s>", true), ("<unk>", false), ("<s>", false), ("<|endoftext|>", false)] {
                guard let id = lookup.id(of: Array(text.utf8)) else { continue }
                if strips { attributes[Int(id)].insert(.rightStrip) } else { attributes[Int(id)].remove(.rightStrip) }
            }
        }

        self.attributes = attributes
        self.bos = bos
        self.eos = eos
        self.eot = eot
        self.addsBOS = addsBOS
        self.addsEOS = addsEOS
        self.addsSpacePrefix = addsSpacePrefix
        self.cleansSpaces = cleansSpaces
        self.endOfGeneration = endOfGeneration
    }

    /// Token texts llama.cpp gives a meaning by their text alone (llama-vocab.cpp).
    private static let recognisedTokens = (
        endOfTurn: texts(["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                          "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"]),
        endOfMessage: texts(["<|eom_id|>"]),
        // Fill-in-the-middle: prefix, suffix, middle, pad, repository, file separator.
        fill: [texts(["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"]),
               texts(["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"]),
               texts(["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"]),
               texts(["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"]),
               texts(["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"]),
               texts(["<|file_sep|>"])],
        endOfGeneration: texts(["<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
                                "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
                                "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["]),
        alwaysShown: texts(["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"])
    )

    private static func texts(_ strings: [String]) -> Set<[UInt8]> { Set(strings.map { Array($0.utf8) }) }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
