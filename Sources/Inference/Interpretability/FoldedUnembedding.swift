import Tensors

extension LanguageModel {
    /// The output matrix with the final norm's weights folded in, as TransformerLens's
    /// `fold_ln` makes `W_U`: `[vocabulary][width]`, row t token t's direction, so that token
    /// t's logit is that row · (x / rms(x)) for a last residual stream x (before the output's
    /// own scale and the final softcap, where a model has them). What direct logit attribution
    /// projects each block's output onto. Reads the whole matrix: run it off the cooperative pool.
    public func foldedUnembedding(isCancelled: () -> Bool = { false }) -> Tensor? {
        let unembedding = architecture.unembedding, width = configuration.embeddingLength
        let rows = unembedding.output.matrix.rows
        var values = [Float](repeating: 0, count: rows * width)
        let finished = values.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            for row in 0..<rows {
                if row % 4096 == 0, isCancelled() { return false }
                let pointer = base + row * width
                unembedding.output.matrix.dequantize(row: row, into: pointer)
                for column in 0..<width { pointer[column] *= unembedding.norm[column] }
            }
            return true
        }
        guard finished else { return nil }
        return Tensor(values, shape: [rows, width], axes: ["token", "width"])
    }
}
