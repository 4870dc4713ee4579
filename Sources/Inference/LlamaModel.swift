/// A loaded LLaMA-architecture model: configuration, tokenizer and weight views into the
/// memory-mapped GGUF file. Immutable and shared by every session of the file.
public final class LlamaModel: Sendable {
    struct Block: Sendable {
        let attentionNorm: [Float]
        let query: Matrix
        let key: Matrix
        let value: Matrix
        let attentionOutput: Matrix
        let feedForwardNorm: [Float]
        let gate: Matrix
        let up: Matrix
        let down: Matrix
    }

    /// The model's shape.
    public let configuration: LlamaConfiguration
    /// The model's vocabulary.
    public let tokenizer: Tokenizer
    /// The parsed file.
    public let gguf: GGUFFile
    let tokenEmbedding: Matrix
    let blocks: [Block]
    let outputNorm: [Float]
    let output: Matrix

    /// Loads the model in the GGUF file at `path`.
    public convenience init(path: String) throws(ModelError) {
        try self.init(gguf: GGUFFile(path: path))
    }

    /// Builds the model from a parsed GGUF file, checking every tensor's presence, type and shape.
    public init(gguf: GGUFFile) throws(ModelError) {
        self.gguf = gguf
        tokenizer = try Tokenizer(gguf: gguf)
        let configuration = try LlamaConfiguration(gguf: gguf, vocabularySize: tokenizer.vocabularySize)
        self.configuration = configuration
        let dimension = configuration.embeddingLength
        let kvDimension = configuration.kvDimension
        let hidden = configuration.feedForwardLength

        func tensor(_ name: String) throws(ModelError) -> GGUFFile.Tensor {
            guard let tensor = gguf.tensorsByName[name] else {
                throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "is missing")
            }
            return tensor
        }
        func matrix(_ name: String, columns: Int, rows: Int) throws(ModelError) -> Matrix {
            let found = try tensor(name)
            guard found.shape == [columns, rows] else {
                throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(columns), \(rows)]")
            }
            return try Matrix(found, in: gguf)
        }
        func vector(_ name: String) throws(ModelError) -> [Float] {
            let found = try tensor(name)
            guard found.shape == [dimension] else {
                throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(dimension)]")
            }
            let weights = try Matrix(found, in: gguf)
            return [Float](unsafeUninitializedCapacity: dimension) { buffer, count in
                if let base = buffer.baseAddress { weights.dequantize(row: 0, into: base) }
                count = dimension
            }
        }

        tokenEmbedding = try matrix("token_embd.weight", columns: dimension, rows: configuration.vocabularySize)
        var blocks: [Block] = []
        for index in 0..<configuration.blockCount {
            let prefix = "blk.\(index)."
            blocks.append(Block(
                attentionNorm: try vector(prefix + "attn_norm.weight"),
                query: try matrix(prefix + "attn_q.weight", columns: dimension, rows: dimension),
                key: try matrix(prefix + "attn_k.weight", columns: dimension, rows: kvDimension),
                value: try matrix(prefix + "attn_v.weight", columns: dimension, rows: kvDimension),
                attentionOutput: try matrix(prefix + "attn_output.weight", columns: dimension, rows: dimension),
                feedForwardNorm: try vector(prefix + "ffn_norm.weight"),
                gate: try matrix(prefix + "ffn_gate.weight", columns: dimension, rows: hidden),
                up: try matrix(prefix + "ffn_up.weight", columns: dimension, rows: hidden),
                down: try matrix(prefix + "ffn_down.weight", columns: hidden, rows: dimension)
            ))
        }
        self.blocks = blocks
        outputNorm = try vector("output_norm.weight")
        output = gguf.tensorsByName["output.weight"] == nil
            ? tokenEmbedding
            : try matrix("output.weight", columns: dimension, rows: configuration.vocabularySize)
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
    /// token embedding (unless it doubles as the output matrix), plus the norm vectors.
    public var bytesReadPerToken: Int {
        let matrices = blocks.flatMap { [$0.query, $0.key, $0.value, $0.attentionOutput, $0.gate, $0.up, $0.down] } + [output]
        let norms = (2 * blocks.count + 1) * configuration.embeddingLength * 4
        return matrices.reduce(0) { $0 + $1.byteCount } + tokenEmbedding.rowBytes + norms
    }

    /// The number of weights.
    public var parameterCount: Int {
        gguf.tensors.reduce(0) { $0 + $1.elementCount }
    }

    /// Runs `tokens` at positions `state.position...` through the model, appending them to the
    /// state's KV cache, and writes the logits of the last token (or of every token, with
    /// `allLogits`) into `state.logits`.
    ///
    /// - Throws: `ModelError` when the tokens do not fit in the context or are not in the vocabulary.
    func forward(_ tokens: [Int32], state: InferenceState, allLogits: Bool = false) throws(ModelError) {
        guard state.position + tokens.count <= state.contextLength else {
            throw ModelError(file: gguf.path, field: "context", reason: "\(state.position + tokens.count) tokens do not fit in the context of \(state.contextLength)")
        }
        for token in tokens where token < 0 || Int(token) >= configuration.vocabularySize {
            throw ModelError(file: gguf.path, field: "token", reason: "id \(token) is outside the vocabulary of \(configuration.vocabularySize)")
        }
        guard tokens.count <= state.batchCapacity else {
            throw ModelError(file: gguf.path, field: "batch", reason: "\(tokens.count) tokens exceed the batch capacity \(state.batchCapacity)")
        }
        let count = tokens.count
        let dimension = configuration.embeddingLength
        let kvDimension = configuration.kvDimension
        let hidden = configuration.feedForwardLength
        let x = state.residual, normed = state.normed
        for (index, token) in tokens.enumerated() {
            tokenEmbedding.dequantize(row: Int(token), into: x + index * dimension)
        }
        Operations.prepareRoPE(state: state, start: state.position, count: count, configuration: configuration)
        let pairs = configuration.ropeDimensionCount / 2
        for (layer, block) in blocks.enumerated() {
            // Attention.
            Operations.rmsNorm(x, weights: block.attentionNorm, epsilon: configuration.rmsEpsilon, into: normed, count: count, width: dimension)
            state.pool.multiply(block.query, normed, into: state.query, count: count, scratch: state.scratch)
            state.pool.multiply(block.key, normed, into: state.key, count: count, scratch: state.scratch)
            state.pool.multiply(block.value, normed, into: state.value, count: count, scratch: state.scratch)
            for index in 0..<count {
                let position = state.position + index
                let cosines = state.ropeCosines + index * pairs, sines = state.ropeSines + index * pairs
                Operations.rope(state.query + index * dimension, heads: configuration.headCount, cosines: cosines, sines: sines, configuration: configuration)
                Operations.rope(state.key + index * kvDimension, heads: configuration.headCountKV, cosines: cosines, sines: sines, configuration: configuration)
                (state.keyCache(layer: layer) + position * kvDimension).update(from: state.key + index * kvDimension, count: kvDimension)
                (state.valueCache(layer: layer) + position * kvDimension).update(from: state.value + index * kvDimension, count: kvDimension)
            }
            Operations.attention(state: state, layer: layer, count: count, configuration: configuration)
            state.pool.multiply(block.attentionOutput, state.attended, into: normed, count: count, scratch: state.scratch)
            Operations.add(normed, to: x, count: count * dimension)
            // Feed-forward (SwiGLU).
            Operations.rmsNorm(x, weights: block.feedForwardNorm, epsilon: configuration.rmsEpsilon, into: normed, count: count, width: dimension)
            state.pool.multiply(block.gate, normed, into: state.gate, count: count, scratch: state.scratch)
            state.pool.multiply(block.up, normed, into: state.up, count: count, scratch: state.scratch)
            Operations.swiGLU(state.gate, state.up, count: count * hidden)
            state.pool.multiply(block.down, state.gate, into: normed, count: count, scratch: state.scratch)
            Operations.add(normed, to: x, count: count * dimension)
        }
        let first = allLogits ? 0 : count - 1
        Operations.rmsNorm(x + first * dimension, weights: outputNorm, epsilon: configuration.rmsEpsilon, into: normed, count: count - first, width: dimension)
        state.pool.multiply(output, normed, into: state.logits, count: count - first, scratch: state.scratch)
        state.position += count
    }
}
