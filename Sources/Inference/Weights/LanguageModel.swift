import CPUBackend
import GGUF
import Grammars
import Synchronization
import Tokenizers

/// A loaded model of any architecture Lumen runs: configuration, tokenizer and the
/// architecture's weights, views into the memory-mapped GGUF file. Immutable and shared by every
/// session of the file.
public final class LanguageModel: Sendable {
    /// The model's shape.
    public let configuration: ModelConfiguration
    /// The model's vocabulary.
    public let tokenizer: Tokenizer
    /// The parsed file.
    public let gguf: GGUFFile
    /// The architecture's weights and forward pass.
    let architecture: any ModelArchitecture
    /// The weights LoRA adapters may adapt: those the architecture multiplies as llama.cpp's
    /// `build_lora_mm` and `build_lora_mm_id` do (the token embedding aside), each with the scale
    /// that multiplies its product alone, before the adapters' are added (an attention
    /// projection's `.scale`, each expert's of stacked experts; 1 for most), which a merge divides
    /// the adapters' products by.
    let adaptableTensors: [String: [Float]]
    /// The vocabulary's trie for grammars, built the first time a generation needs it.
    private let trie = Mutex<TokenTrie?>(nil)

    /// Loads the model in the GGUF file at `path`.
    public convenience init(path: String) throws(ModelError) {
        try self.init(gguf: GGUFFile(path: path))
    }

    /// Builds the model from a parsed GGUF file, checking every tensor's presence, type and shape.
    public init(gguf: GGUFFile) throws(ModelError) {
        self.gguf = gguf
        try gguf.requireKnownTypes()
        tokenizer = try Tokenizer(gguf: gguf)
        let configuration = try ModelConfiguration(gguf: gguf, vocabularySize: tokenizer.vocabularySize)
        self.configuration = configuration
        guard let kind = Architectures.named(configuration.architecture) else {
            throw ModelError(file: gguf.path, field: "general.architecture", reason: "architecture \"\(configuration.architecture)\" is not supported")
        }
        let loader = WeightLoader(gguf: gguf, configuration: configuration)
        architecture = try kind.init(weights: loader)
        adaptableTensors = loader.adaptable.all
    }

    /// The vocabulary as a trie of token texts, which a grammar walks to mask the tokens it
    /// refuses; built once, on first use.
    public var tokenTrie: TokenTrie {
        trie.withLock { trie in
            if let trie { return trie }
            let built = TokenTrie(pieces: (0..<Int32(configuration.vocabularySize)).map { tokenizer.piece($0) },
                                  endOfGeneration: tokenizer.vocabulary.endOfGeneration)
            trie = built
            return built
        }
    }

    /// Reads one byte of every page of the weights, so the operating system loads them from disk
    /// now rather than during the first forward pass.
    public func touchWeights() {
        let bytes = gguf.mapping.bytes
        var checksum: UInt8 = 0
        for offset in stride(from: 0, to: bytes.count, by: 4096) { checksum &+= bytes[offset] }
        withExtendedLifetime(checksum) {}
    }

    /// Bytes of weights one generated token reads: every matrix once, but only one row of the
    /// token embedding (unless it doubles as the output matrix), plus the vectors (norms, biases,
    /// RoPE factors: every one-dimensional tensor of the file, widened to F32 at load).
    public var bytesReadPerToken: Int {
        let vectors = gguf.tensors.filter { $0.shape.count == 1 }.reduce(0) { $0 + $1.elementCount * 4 }
        return architecture.matrices.reduce(0) { $0 + $1.byteCount } + architecture.tokenEmbedding.rowBytes + vectors
    }

    /// The number of weights.
    /// What the architecture reads of the file beyond the shape every model has (its own
    /// configuration), as name–value lines for `lumen info`.
    public var architectureDetails: [(name: String, value: String)] { architecture.details }

    public var parameterCount: Int {
        gguf.tensors.reduce(0) { $0 + $1.elementCount }
    }

    /// Runs `tokens` at the next positions of `sequence` through the model, appending them to
    /// its KV cache, and writes the logits of the last token (or of every token, with
    /// `allLogits`) into `state.logits`.
    ///
    /// - Throws: `ModelError` when the tokens do not fit in the context or are not in the vocabulary.
    func forward(_ tokens: [Int32], sequence: Int = 0, state: InferenceState, allLogits: Bool = false) throws(ModelError) {
        guard state.positions[sequence] + tokens.count <= state.contextLength else {
            throw ModelError(file: gguf.path, field: "context",
                             reason: "\(state.positions[sequence] + tokens.count) tokens do not fit in the context of \(state.contextLength)")
        }
        try check(tokens, state: state)
        try checkRecurrence(of: [sequence], state: state)
        state.placeRun(count: tokens.count, sequence: sequence)
        architecture.forward(tokens, state: state, allLogits: allLogits)
        state.positions[sequence] += tokens.count
        state.recurrentPositions[sequence] = state.positions[sequence]
    }

    /// Runs one token of each of several sequences through the model in one pass — each weight
    /// row read once for all of them, each token attending to its own sequence's cache — and
    /// writes each token's logits into its row of `state.logits`, in order. Each row is computed
    /// as that token alone would be (`ComputeBackend.tokenByToken`), bit for bit, so a
    /// sequence decodes the same in any company.
    ///
    /// - Throws: `ModelError` when a sequence's cache is full or a token is not in the vocabulary.
    func forward(decoding steps: [(sequence: Int, token: Int32)], state: InferenceState) throws(ModelError) {
        for step in steps where state.positions[step.sequence] >= state.contextLength {
            throw ModelError(file: gguf.path, field: "context", reason: "\(state.contextLength + 1) tokens do not fit in the context of \(state.contextLength)")
        }
        let tokens = steps.map(\.token)
        try check(tokens, state: state)
        try checkRecurrence(of: steps.map(\.sequence), state: state)
        state.placeEach(steps.map(\.sequence))
        state.backend.tokenByToken = true
        defer { state.backend.tokenByToken = false }
        architecture.forward(tokens, state: state, allLogits: true)
        for step in steps {
            state.positions[step.sequence] += 1
            state.recurrentPositions[step.sequence] = state.positions[step.sequence]
        }
    }

    /// Refuses a pass that would continue a recurrent state from a position it is not at: a
    /// recurrent state cannot go back (the sessions start such a sequence again from position 0).
    private func checkRecurrence(of sequences: [Int], state: InferenceState) throws(ModelError) {
        for sequence in sequences where !state.continuesRecurrence(sequence) {
            throw ModelError(file: gguf.path, field: "recurrent state",
                             reason: "is at position \(state.recurrentPositions[sequence]) and cannot continue from \(state.positions[sequence])")
        }
    }

    /// Refuses tokens outside the vocabulary, and more than a pass takes.
    private func check(_ tokens: [Int32], state: InferenceState) throws(ModelError) {
        for token in tokens where token < 0 || Int(token) >= configuration.vocabularySize {
            throw ModelError(file: gguf.path, field: "token", reason: "id \(token) is outside the vocabulary of \(configuration.vocabularySize)")
        }
        guard tokens.count <= state.batchCapacity else {
            throw ModelError(file: gguf.path, field: "batch", reason: "\(tokens.count) tokens exceed the batch capacity \(state.batchCapacity)")
        }
    }
}

extension LanguageModel {
    /// The tensor types with how many tensors have each, most common first: `Q4_K ×25, F32 ×9`.
    public var tensorTypeCounts: String {
        var types: [TensorType: Int] = [:]
        for tensor in gguf.tensors { types[tensor.type, default: 0] += 1 }
        return types.sorted { ($0.value, $1.key.description) > ($1.value, $0.key.description) }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}
