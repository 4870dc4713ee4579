import CPUBackend
import GGUF

/// A direction in the residual stream for each of a model's blocks, as llama.cpp's control
/// vectors hold (`llama-cvector-generator` writes them, `--control-vector` reads them): adding a
/// multiple of block N's direction to the residual stream after block N steers what the model
/// writes. Vectors add and scale, as llama.cpp sums the files it is given, each with its scale.
public struct ControlVector: Sendable, Equatable {
    /// The residual stream's width.
    public let width: Int
    /// Each block's direction, by block index; blocks without one are left alone.
    public private(set) var directions: [Int: [Float]]

    /// A vector of `width`-wide `directions`.
    public init(width: Int, directions: [Int: [Float]]) {
        self.width = width
        self.directions = directions
    }

    /// The same `direction` for every block of `blocks`: a direction made by hand (a difference
    /// of two runs' residual streams) added after each of those blocks.
    public init(direction: [Float], blocks: ClosedRange<Int>) {
        self.init(width: direction.count, directions: Dictionary(uniqueKeysWithValues: blocks.map { ($0, direction) }))
    }

    /// Reads the control-vector GGUF at `path`: `general.architecture` `controlvector`, one F32
    /// (or F16) tensor `direction.N` per block N.
    public init(contentsOf path: String) throws(ModelError) {
        let gguf = try GGUFFile(path: path)
        let architecture = gguf.metadata["general.architecture"]?.stringValue
        guard architecture == "controlvector" else {
            throw ModelError(file: path, field: "general.architecture", reason: "is \(architecture.map { "\"\($0)\"" } ?? "missing"), not \"controlvector\": not a control vector")
        }
        var directions: [Int: [Float]] = [:]
        var width: Int?
        for tensor in gguf.tensors {
            guard tensor.name.hasPrefix("direction."), let block = Int(tensor.name.dropFirst("direction.".count)), block >= 0 else {
                throw ModelError(file: path, field: "tensor \(tensor.name)", reason: "is not named direction.N, N a block index")
            }
            guard tensor.shape.count == 1, tensor.shape[0] == (width ?? tensor.shape[0]) else {
                throw ModelError(file: path, field: "tensor \(tensor.name)", reason: "has shape \(tensor.shape), expected [\(width ?? tensor.shape[0])] like the others")
            }
            width = tensor.shape[0]
            let values = try Matrix(tensor, in: gguf, interleaving: false)
            let direction = [Float](unsafeUninitializedCapacity: tensor.shape[0]) { buffer, count in
                if let base = buffer.baseAddress { values.dequantize(row: 0, into: base) }
                count = tensor.shape[0]
            }
            if let index = direction.firstIndex(where: { !$0.isFinite }) {
                throw ModelError(file: path, field: "tensor \(tensor.name)", reason: "holds \(direction[index]) at index \(index): a direction must be finite")
            }
            directions[block] = direction
        }
        guard let width else { throw ModelError(file: path, field: "tensors", reason: "there are none: a control vector has a direction.N per block") }
        self.init(width: width, directions: directions)
    }

    /// The first block whose direction holds NaN or an infinity, if any.
    public var firstNonFiniteBlock: Int? {
        directions.keys.sorted().first { block in directions[block]!.contains { !$0.isFinite } }
    }

    /// Every direction times `factor`.
    public func scaled(by factor: Float) -> ControlVector {
        ControlVector(width: width, directions: directions.mapValues { $0.map { $0 * factor } })
    }

    /// Every direction scaled to unit length (a direction of zeros stays zeros), so that a
    /// steering scale means the same at every block.
    public func normalized() -> ControlVector {
        ControlVector(width: width, directions: directions.mapValues(Self.unit))
    }

    /// The sum of two vectors of one width, block by block (a block missing from one counts as zero).
    public static func + (left: ControlVector, right: ControlVector) -> ControlVector {
        precondition(left.width == right.width, "control vectors of widths \(left.width) and \(right.width)")
        return ControlVector(width: left.width, directions: left.directions.merging(right.directions) { zip($0, $1).map { $0 + $1 } })
    }

    /// The sum of the control-vector files `files`, each times its scale, as llama.cpp sums the
    /// `--control-vector` files it is given: refused, naming the file, when one does not fit
    /// `model` (another width, or a direction for a block it does not have).
    public static func sum(of files: [(path: String, scale: Float)], for model: LanguageModel) throws(ModelError) -> ControlVector? {
        var sum: ControlVector?
        for (path, scale) in files {
            let vector = try ControlVector(contentsOf: path)
            if let misfit = vector.misfit(model) { throw ModelError(file: path, field: "directions", reason: misfit) }
            let scaled = vector.scaled(by: scale)
            let total = sum.map { $0 + scaled } ?? scaled
            if let block = total.firstNonFiniteBlock {
                throw ModelError(file: path, field: "direction.\(block)", reason: "times the scale \(scale) (added to the vectors before it) is not finite")
            }
            sum = total
        }
        return sum
    }

    /// Why this vector does not fit `model` (another width, a direction for a block it does not
    /// have), or nil when it fits.
    public func misfit(_ model: LanguageModel) -> String? {
        let blockCount = model.configuration.blockCount, modelWidth = model.configuration.embeddingLength
        if width != modelWidth { return "the control vector has \(width) values per block, but the model's residual stream has \(modelWidth)" }
        if let beyond = directions.keys.filter({ $0 >= blockCount }).min() {
            return "the control vector has a direction for block \(beyond), but the model has \(blockCount) blocks (0…\(blockCount - 1))"
        }
        return nil
    }

    /// The hook that adds this vector after each block in `blocks` (every block when nil), at
    /// every position, as llama.cpp's `--control-vector-layer-range` does.
    public func steering(blocks: ClosedRange<Int>? = nil) -> Steering {
        Steering(vector: self, blocks: blocks)
    }

    /// Adds a control vector to the residual stream after the blocks it steers.
    public struct Steering: ForwardHook {
        /// The vector added.
        public let vector: ControlVector
        /// The blocks after which it is added (nil: all it has directions for).
        public let blocks: ClosedRange<Int>?

        public func visits(_ point: ActivationPoint, layer: Int) -> Bool {
            point == .blockOutput && blocks?.contains(layer) != false && vector.directions[layer] != nil
        }

        public func check(_ model: LanguageModel) throws(ModelError) {
            let blockCount = model.configuration.blockCount
            func refuse(_ reason: String) -> ModelError { ModelError(file: model.gguf.path, field: "steering", reason: reason) }
            if let misfit = vector.misfit(model) { throw refuse(misfit) }
            guard let blocks else { return }
            guard blocks.lowerBound >= 0, blocks.upperBound < blockCount else {
                throw refuse("blocks \(blocks.lowerBound)…\(blocks.upperBound) are not all in the model's \(blockCount) blocks (0…\(blockCount - 1))")
            }
            guard vector.directions.keys.contains(where: blocks.contains) else {
                throw refuse("the control vector has no direction for blocks \(blocks.lowerBound)…\(blocks.upperBound): it would change nothing")
            }
        }

        public func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
            guard let direction = vector.directions[layer], direction.count == width else { return }
            for row in 0..<positions.count {
                for column in 0..<width { rows[row * width + column] += direction[column] }
            }
        }
    }
}
