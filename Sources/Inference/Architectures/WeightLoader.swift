import CPUBackend
import GGUF
import Synchronization

/// Finds a model's tensors by name and checks their shapes against its configuration, so an
/// architecture's loading code reads as a list of its tensors.
struct WeightLoader {
    let gguf: GGUFFile
    let configuration: ModelConfiguration
    /// The weights loaded as projections that LoRA adapters may adapt, with their scales (`AdaptableWeights`).
    let adaptable = AdaptableWeights()

    /// The weights an architecture loaded as projections llama.cpp multiplies through
    /// `build_lora_mm` (those LoRA adapters may adapt), as the loader finds them.
    final class AdaptableWeights: Sendable {
        private let scales = Mutex<[String: [Float]]>([:])
        /// Records that adapters may adapt the weight of `projections` (one, or each expert's of
        /// stacked experts), with the scale that multiplies each one's product before theirs is
        /// added (1 when its scale, if any, multiplies theirs too).
        func insert(_ projections: [Projection]) {
            guard let tensor = projections.first?.adapted?.tensor else { return }
            let productScales = projections.map { $0.biasBeforeScale ? 1 : $0.scale ?? 1 }
            scales.withLock { $0[tensor] = productScales }
        }
        var all: [String: [Float]] { scales.withLock { $0 } }
    }

    private func tensor(_ name: String) throws(ModelError) -> GGUFFile.Tensor {
        guard let tensor = gguf.tensorsByName[name] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "is missing")
        }
        return tensor
    }

    /// Whether the file has weight `name` (of block `layer`, or of the model).
    func has(_ name: TensorName, layer: Int? = nil) -> Bool { gguf.tensorsByName[name.weight(layer: layer)] != nil }

    /// Bias `role` of block `layer`, of `length`, widened to F32, when the file has it.
    func optionalBias(_ role: TensorName, layer: Int, length: Int) throws(ModelError) -> [Float]? {
        gguf.tensorsByName[role.bias(layer: layer)] == nil ? nil : try bias(role, layer: layer, length: length)
    }

    /// Weight `role` (of block `layer`, or of the model) as a matrix of `rows` rows of `columns`;
    /// `multiplied` unless it is only looked up by row (see `Matrix.init`).
    func matrix(_ role: TensorName, layer: Int? = nil, columns: Int, rows: Int, multiplied: Bool = true) throws(ModelError) -> Matrix {
        let name = role.weight(layer: layer)
        let found = try tensor(name)
        guard found.shape == [columns, rows] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(columns), \(rows)]")
        }
        return try Matrix(found, in: gguf, interleaving: multiplied)
    }

    /// Weight `role` (of block `layer`, or of the model) as a vector of `length` (default: the
    /// embedding length), widened to F32.
    func vector(_ role: TensorName, layer: Int? = nil, length: Int? = nil) throws(ModelError) -> [Float] {
        try vector(named: role.weight(layer: layer), length: length)
    }

    /// Weight `role` of block `layer` as a vector of one of `lengths`, widened to F32.
    func vector(_ role: TensorName, layer: Int, lengths: [Int]) throws(ModelError) -> [Float] {
        try vector(named: role.weight(layer: layer), lengths: lengths)
    }

    /// Weight `role` (of block `layer`, or of the model) as a projection of `columns` inputs to
    /// `rows` outputs, with the scale and bias the file has of those the architecture `applies`
    /// (the bias required with `requireBias`); a feed-forward matrix's bias comes before its
    /// scale, as in llama.cpp's `build_ffn`. LoRA adapters may adapt it unless llama.cpp
    /// multiplies it without them (`adaptable: false`).
    func projection(_ role: TensorName, layer: Int? = nil, columns: Int, rows: Int, requireBias: Bool = false,
                    applies extras: Projection.Extras = .all, adaptable: Bool = true) throws(ModelError) -> Projection {
        let feedForward: Set<TensorName> = [.gate, .up, .down]
        let name = role.weight(layer: layer)
        var projection = Projection(try matrix(role, layer: layer, columns: columns, rows: rows), biasBeforeScale: feedForward.contains(role),
                                    adaptedAs: adaptable ? name : nil)
        try withScaleAndBias(&projection, of: role, layer: layer, requireBias: requireBias, applies: extras)
        self.adaptable.insert([projection])
        return projection
    }

    /// Adds `role`'s scale and bias, those of `extras` the file has, to a projection of it.
    func withScaleAndBias(_ projection: inout Projection, of role: TensorName, layer: Int?, requireBias: Bool = false,
                          applies extras: Projection.Extras = .all) throws(ModelError) {
        if requireBias || (extras.contains(.bias) && gguf.tensorsByName[role.bias(layer: layer)] != nil) {
            projection.bias = try vector(named: role.bias(layer: layer), length: projection.matrix.rows)
        }
        if extras.contains(.scale), gguf.tensorsByName[role.scale(layer: layer)] != nil {
            projection.scale = try vector(named: role.scale(layer: layer), length: 1)[0]
        }
    }

    /// The experts of `role` in block `layer`: a three-dimensional tensor of `count` matrices of
    /// `rows` rows of `columns`, each a projection with its entry of the per-expert scales
    /// (`<name>.scale`, `count` numbers, or those of `scales`) and its row of the per-expert biases
    /// (`<name>.bias`, `count` rows of `rows`, added after the scale as `ggml_add_id` adds them)
    /// when the file has them and the architecture `applies` them.
    func experts(_ role: TensorName, layer: Int, columns: Int, rows: Int, count: Int, applies extras: Projection.Extras,
                 scales scaleRole: TensorName? = nil) throws(ModelError) -> [Projection] {
        let name = role.weight(layer: layer)
        let found = try tensor(name)
        guard found.shape == [columns, rows, count] else {
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected [\(columns), \(rows), \(count)]")
        }
        let all = try Matrix(found, in: gguf, interleaving: true)
        let scaleName = (scaleRole ?? role).scale(layer: layer)
        let scales = !extras.contains(.scale) || gguf.tensorsByName[scaleName] == nil ? nil : try vector(named: scaleName, length: count)
        var biases: [[Float]]?
        if extras.contains(.bias), let tensor = gguf.tensorsByName[role.bias(layer: layer)] {
            guard tensor.shape == [rows, count] else {
                throw ModelError(file: gguf.path, field: "tensor \(role.bias(layer: layer))", reason: "has shape \(tensor.shape), expected [\(rows), \(count)]")
            }
            let flat = widened(try Matrix(tensor, in: gguf, interleaving: false))
            biases = (0..<count).map { Array(flat[($0 * rows)..<(($0 + 1) * rows)]) }
        }
        // LoRA adapters may adapt the stack, a pair per expert (llama.cpp's `build_lora_mm_id`).
        let projections = (0..<count).map {
            Projection(all.rows(($0 * rows)..<(($0 + 1) * rows)), scale: scales?[$0], bias: biases?[$0], adaptedAs: name,
                       rows: ($0 * rows)..<(($0 + 1) * rows), expert: $0)
        }
        adaptable.insert(projections)
        return projections
    }

    /// The per-input scales of `role` in block `layer` (`<name>.scale`, a vector of `length`:
    /// Gemma 4's router's), widened to F32.
    func scaleVector(_ role: TensorName, layer: Int, length: Int) throws(ModelError) -> [Float] {
        try vector(named: role.scale(layer: layer), length: length)
    }

    /// Tensor `role` of block `layer` stored without a suffix (`blk.3.ssm_a`), a vector of `length`, widened to F32.
    func bareVector(_ role: TensorName, layer: Int, length: Int) throws(ModelError) -> [Float] {
        try vector(named: role.bare(layer: layer), length: length)
    }

    /// Weight `role` of block `layer`, `rows` rows of `columns` (a row per channel), widened to F32 row after row.
    func table(_ role: TensorName, layer: Int, columns: Int, rows: Int) throws(ModelError) -> [Float] {
        widened(try matrix(role, layer: layer, columns: columns, rows: rows, multiplied: false))
    }

    /// Bias `role` of block `layer`, of `length`, widened to F32.
    func bias(_ role: TensorName, layer: Int, length: Int) throws(ModelError) -> [Float] {
        try vector(named: role.bias(layer: layer), length: length)
    }

    private func vector(named name: String, length: Int?) throws(ModelError) -> [Float] {
        try vector(named: name, lengths: [length ?? configuration.embeddingLength])
    }

    private func vector(named name: String, lengths: [Int]) throws(ModelError) -> [Float] {
        let found = try tensor(name)
        guard found.shape.count == 1, lengths.contains(found.shape[0]) else {
            let expected = Array(Set(lengths)).sorted().map { "[\($0)]" }.joined(separator: " or ")
            throw ModelError(file: gguf.path, field: "tensor \(name)", reason: "has shape \(found.shape), expected \(expected)")
        }
        return widened(try Matrix(found, in: gguf, interleaving: false))
    }

    /// Every row of `weights`, widened to F32, one after another.
    private func widened(_ weights: Matrix) -> [Float] {
        let (rows, columns) = (weights.rows, weights.columns)
        return [Float](unsafeUninitializedCapacity: rows * columns) { buffer, count in
            if let base = buffer.baseAddress {
                for row in 0..<rows { weights.dequantize(row: row, into: base + row * columns) }
            }
            count = rows * columns
        }
    }

    /// The token embedding, and the output projection (the embedding itself when the file ties
    /// them, with the output's scale and bias when it has them).
    func embeddingAndOutput() throws(ModelError) -> (embedding: Matrix, output: Projection) {
        let embedding = try matrix(.tokenEmbedding, columns: configuration.embeddingLength, rows: configuration.vocabularySize,
                                   multiplied: !has(.output))
        var output = Projection(has(.output)
            ? try matrix(.output, columns: configuration.embeddingLength, rows: configuration.vocabularySize)
            : embedding, adaptedAs: has(.output) ? TensorName.output.weight() : nil)
        try withScaleAndBias(&output, of: .output, layer: nil)
        adaptable.insert([output])
        return (embedding, output)
    }
}
