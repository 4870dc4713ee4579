import Foundation
import GGUF

extension ControlVector {
    /// The contrastive vector (mean difference, as in CAA and the simplest of llama.cpp's control
    /// vectors): for each block N ≥ 1, the mean over `positive` of the residual stream after block
    /// N at the prompt's last token, minus the same mean over `negative`. Block 0 gets no
    /// direction, as in llama.cpp's files. Prompts are tokenized as `generate` does (BOS added,
    /// special tokens parsed) and run on `session`'s thread, one at a time.
    public static func contrastive(session: ModelSession, positive: [String], negative: [String]) async throws(ModelError) -> ControlVector {
        let configuration = session.model.configuration
        let width = configuration.embeddingLength, blocks = 1..<configuration.blockCount
        guard !positive.isEmpty, !negative.isEmpty else {
            throw ModelError(file: session.model.gguf.path, field: positive.isEmpty ? "positive" : "negative", reason: "needs at least one prompt")
        }
        /// The mean over `prompts` of each block's last row.
        func mean(_ prompts: [String]) async throws(ModelError) -> [Int: [Float]] {
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
        let (positives, negatives) = (try await mean(positive), try await mean(negative))
        return ControlVector(width: width, directions: positives.merging(negatives) { zip($0, $1).map { $0 - $1 } })
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
