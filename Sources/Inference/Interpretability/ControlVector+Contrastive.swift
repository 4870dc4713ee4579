import CPUBackend
import Executors
import Foundation
import GenerationTypes
import GGUF

extension ControlVector {
    /// A contrastive vector from `positive` and `negative` prompts, one direction for each block
    /// N ≥ 1 from the residual stream after block N (block 0 gets none, as in llama.cpp's files),
    /// made as `method` says. Prompts are tokenized as `generate` does (BOS added, special tokens
    /// parsed) and run on `session`'s thread, one at a time.
    ///
    /// llama-cvector-generator takes direction N from block N − 1's output (its `direction.1` is
    /// `l_out-0`); Lumen's direction N is the difference where it is added, after block N.
    public static func contrastive(session: ModelSession, positive: [String], negative: [String],
                                   method: ContrastiveMethod = .last) async throws(ModelError) -> ControlVector {
        let file = session.model.gguf.path
        guard !positive.isEmpty, !negative.isEmpty else {
            throw ModelError(file: file, field: positive.isEmpty ? "positive" : "negative", reason: "needs at least one prompt")
        }
        let width = session.model.configuration.embeddingLength
        switch method {
        case .last:
            let (positives, negatives) = (try await lastTokenMean(session, positive), try await lastTokenMean(session, negative))
            return ControlVector(width: width, directions: positives.merging(negatives) { zip($0, $1).map { $0 - $1 } })
        case .mean, .pca:
            guard positive.count == negative.count else {
                throw ModelError(file: file, field: "method", reason: "\(method.rawValue) pairs positive i with negative i: give as many of each, not \(positive.count) and \(negative.count)")
            }
            let differences = try await pairDifferences(session, positive, negative)
            // The means and power iterations are long compute: on a thread of their own, not the
            // cooperative pool, stopping between steps when the task is cancelled.
            let stop = StopSignal()
            let directions: [Int: [Float]]
            do {
                directions = try await withTaskCancellationHandler {
                    try await DedicatedThread.run(name: "lumen-steering") { () throws(ModelError) -> [Int: [Float]] in
                        var directions: [Int: [Float]] = [:]
                        for (block, rows) in differences {
                            if stop.isRaised { throw ModelError(file: file, field: "task", reason: "cancelled") }
                            let mean = unit(meanRow(rows, width: width))
                            directions[block] = method == .mean ? mean : try principalDirection(rows, width: width, toward: mean, file: file, stop: stop)
                        }
                        return directions
                    }
                } onCancel: {
                    stop.raise()
                }
            } catch let error as ModelError {
                throw error
            } catch {
                throw ModelError(file: file, field: "method", reason: "\(error)")
            }
            return ControlVector(width: width, directions: directions)
        }
    }

    /// The blocks a contrastive vector has directions for: all but the first.
    private static func blocks(_ session: ModelSession) -> Range<Int> { 1..<session.model.configuration.blockCount }

    /// The mean over `prompts` of each block's output at the last token.
    private static func lastTokenMean(_ session: ModelSession, _ prompts: [String]) async throws(ModelError) -> [Int: [Float]] {
        let width = session.model.configuration.embeddingLength, blocks = blocks(session)
        var sums = Dictionary(uniqueKeysWithValues: blocks.map { ($0, [Float](repeating: 0, count: width)) })
        for prompt in prompts {
            let capture = ActivationCapture([.blockOutput], blocks: Set(blocks))
            _ = try await session.evaluate(session.tokenize(prompt), hooks: [capture])
            for block in blocks {
                let last = capture.rows(.blockOutput, block: block).suffix(width)
                sums[block] = zip(sums[block] ?? [], last).map { $0 + $1 / Float(prompts.count) }
            }
        }
        return sums
    }

    /// For each block, the rows (each `width` long) of positive minus negative output at every
    /// position of every pair, each pair padded to its longer prompt's length with the last
    /// token of " " (as llama-cvector-generator pads), rows of zeros (|x| ≤ 10⁻⁶: a shared
    /// prefix) left out.
    private static func pairDifferences(_ session: ModelSession, _ positive: [String], _ negative: [String]) async throws(ModelError) -> [Int: [Float]] {
        let width = session.model.configuration.embeddingLength, blocks = blocks(session)
        let padding = session.tokenize(" ", addSpecial: false).last
        var differences = Dictionary(uniqueKeysWithValues: blocks.map { ($0, [Float]()) })
        for (good, bad) in zip(positive, negative) {
            var (first, second) = (session.tokenize(good), session.tokenize(bad))
            let length = max(first.count, second.count)
            if let padding {
                first += Array(repeating: padding, count: length - first.count)
                second += Array(repeating: padding, count: length - second.count)
            }
            let captures = (ActivationCapture([.blockOutput], blocks: Set(blocks)), ActivationCapture([.blockOutput], blocks: Set(blocks)))
            _ = try await session.evaluate(first, hooks: [captures.0])
            _ = try await session.evaluate(second, hooks: [captures.1])
            for block in blocks {
                let (a, b) = (captures.0.take(.blockOutput, block: block), captures.1.take(.blockOutput, block: block))
                for row in 0..<(min(a.count, b.count) / width) {
                    let difference = (0..<width).map { a[row * width + $0] - b[row * width + $0] }
                    if difference.contains(where: { abs($0) > 1e-6 }) { differences[block, default: []] += difference }
                }
            }
        }
        return differences
    }

    /// The mean of `rows` (each `width` long); zeros when there are none.
    private static func meanRow(_ rows: [Float], width: Int) -> [Float] {
        let count = rows.count / width
        var mean = [Double](repeating: 0, count: width)
        for row in 0..<count { for column in 0..<width { mean[column] += Double(rows[row * width + column]) } }
        return mean.map { Float($0 / Double(max(count, 1))) }
    }

    /// `vector` scaled to unit length (as it is when it is all zeros).
    static func unit(_ vector: [Float]) -> [Float] {
        let norm = vector.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot()
        return norm > 0 ? vector.map { Float(Double($0) / norm) } : vector
    }

    /// The unit eigenvector of DᵀD with the largest eigenvalue, for D the `rows`: power iteration
    /// from `start` (the mean difference, so the result points the same way), at most 1,000
    /// steps, until a step moves it less than 10⁻⁷ (llama-cvector-generator's limits), or `stop`.
    private static func principalDirection(_ rows: [Float], width: Int, toward start: [Float], file: String, stop: StopSignal) throws(ModelError) -> [Float] {
        let count = rows.count / width
        guard count > 0 else { return start }
        var square = [Float](repeating: 0, count: width * width)
        rows.withUnsafeBufferPointer { d in
            square.withUnsafeMutableBufferPointer { square in
                // DᵀD: Dᵀ read through D's strides.
                FloatProducts.matrixProduct(m: width, n: width, k: count, a: d.baseAddress!, aRow: 1, aColumn: width, b: d.baseAddress!, bRow: width, bColumn: 1,
                                            c: square.baseAddress!, cRow: width)
            }
        }
        // In floats, as llama-cvector-generator's ggml graph computes it; each step one product of
        // the square matrix with the vector (the engine's F32 row kernel).
        var vector = start
        if vector.allSatisfy({ $0 == 0 }) { vector[0] = 1 }
        var next = [Float](repeating: 0, count: width)
        for _ in 0..<1000 {
            if stop.isRaised { throw ModelError(file: file, field: "task", reason: "cancelled") }
            FloatProducts.rowsTimesVectors(square, rowStride: width, rows: width, vector, tokens: 1, k: width, into: &next, outStride: 1)
            let norm = next.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot()
            guard norm > 0 else { break }
            var moved = 0.0
            for index in 0..<width {
                let unit = Float(Double(next[index]) / norm)
                moved += Double(unit - vector[index]) * Double(unit - vector[index])
                vector[index] = unit
            }
            if moved.squareRoot() < 1e-7 { break }
        }
        // Toward the positives: the mean difference's side.
        let side = zip(vector, start).reduce(0) { $0 + Double($1.0) * Double($1.1) }
        return side < 0 ? vector.map { -$0 } : vector
    }

    /// Writes the vector as a control-vector GGUF, as `llama-cvector-generator` does:
    /// `general.architecture` `controlvector`, `controlvector.model_hint` (the model's
    /// architecture), `controlvector.layer_count`, and an F32 tensor `direction.N` per block.
    /// The file is written atomically (under a temporary name, then renamed), so it is whole or absent.
    public func write(to path: String, modelHint: String) throws(ModelError) {
        let alignment = 32
        let blocks = directions.keys.sorted()
        var header = GGUFWriter(tensorCount: blocks.count, metadataCount: 3)
        header.appendMetadata("general.architecture", string: "controlvector")
        header.appendMetadata("controlvector.model_hint", string: modelHint)
        header.appendMetadata("controlvector.layer_count", int32: Int32(blocks.count))
        let tensorBytes = width * 4, stride = tensorBytes + GGUFWriter.padding(tensorBytes, alignment)
        for (index, block) in blocks.enumerated() {
            header.appendTensor(name: "direction.\(block)", shape: [width], type: .f32, offset: index * stride)
        }
        header.padToAlignment(alignment)
        var data = Data(header.bytes)
        for block in blocks {
            directions[block]?.withUnsafeBytes { data.append(contentsOf: $0) }
            data.append(Data(count: stride - tensorBytes))
        }
        do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw ModelError(file: path, field: "write", reason: error.localizedDescription)
        }
    }
}
