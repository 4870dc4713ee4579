/// Finds a model's tensors by name and checks their shapes against its configuration, so an
/// architecture's loading code reads as a list of its tensors.
struct WeightLoader {
    let gguf: GGUFFile
    let configuration: ModelConfiguration

    func tensor(_ name: String) throws(ModelError) -> GGUFFile.Tensor {
        guard let tensor = gguf.tensorsByName[name] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "is missing")
        }
        return tensor
    }

    /// Whether the file has tensor `name`.
    func has(_ name: String) -> Bool { gguf.tensorsByName[name] != nil }

    /// Matrix `name` of `rows` rows of `columns`; `multiplied` unless it is only looked up by row
    /// (see `Matrix.init`).
    func matrix(_ name: String, columns: Int, rows: Int, multiplied: Bool = true) throws(ModelError) -> Matrix {
        let found = try tensor(name)
        guard found.shape == [columns, rows] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(columns), \(rows)]")
        }
        return try Matrix(found, in: gguf, interleaving: multiplied)
    }

    /// Vector `name` of `length` (default: the embedding length), widened to F32.
    func vector(_ name: String, length: Int? = nil) throws(ModelError) -> [Float] {
        let length = length ?? configuration.embeddingLength
        let found = try tensor(name)
        guard found.shape == [length] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(length)]")
        }
        let weights = try Matrix(found, in: gguf, interleaving: false)
        return [Float](unsafeUninitializedCapacity: length) { buffer, count in
            if let base = buffer.baseAddress { weights.dequantize(row: 0, into: base) }
            count = length
        }
    }

    /// The token embedding, and the output matrix (the embedding itself when the file ties them).
    func embeddingAndOutput() throws(ModelError) -> (embedding: Matrix, output: Matrix) {
        let embedding = try matrix("token_embd.weight", columns: configuration.embeddingLength, rows: configuration.vocabularySize,
                                   multiplied: !has("output.weight"))
        let output = has("output.weight")
            ? try matrix("output.weight", columns: configuration.embeddingLength, rows: configuration.vocabularySize)
            : embedding
        return (embedding, output)
    }
}
