/// How a format's rows are laid out eight at a time for the matrix–vector product (generation),
/// when it has such a layout: one integer instruction then serves eight rows, one per lane, and
/// every scale is applied once for the eight (see `InterleavedRows`). Part of a format's row in
/// the C format table (`x8_leading_halves`, `dot_x8_q8`), whose block size and bytes the layout
/// rearranges (`lumen_interleave_rows`).
package struct RowInterleaving: Sendable {
    /// `output[r] = row r · x` for `groupCount` groups and one vector quantized by
    /// `lumen_quantize_q8` (`withoutVNNI` as in `FormatKernels.QuantizedDot`).
    package typealias Dot = @convention(c) (_ groups: UnsafeRawPointer?, _ groupCount: Int, _ values: UnsafePointer<Int8>?,
                                    _ scales: UnsafePointer<Float>?, _ sums: UnsafePointer<Float>?, _ count: Int,
                                    _ output: UnsafeMutablePointer<Float>?, _ withoutVNNI: Int32) -> Void

    /// The 2-byte fields (F16 scales) at the start of each block, laid out field by field before
    /// the 4-byte pieces.
    /// `Dot` for several tokens whose activations follow one another, token t's results into
    /// `output + t * outputStride`: bit for bit `Dot`'s, each group read once for the tokens.
    package typealias DotTokens = @convention(c) (_ groups: UnsafeRawPointer?, _ groupCount: Int, _ values: UnsafePointer<Int8>?,
                                          _ scales: UnsafePointer<Float>?, _ sums: UnsafePointer<Float>?, _ count: Int, _ tokens: Int,
                                          _ output: UnsafeMutablePointer<Float>?, _ outputStride: Int, _ withoutVNNI: Int32) -> Void

    package let leadingHalves: Int
    package let dot: Dot
    /// The product for several tokens, when the format has one.
    package let dotTokens: DotTokens?
}
