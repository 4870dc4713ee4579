import CKernels

/// How a format's rows are laid out eight at a time for the matrix–vector product (generation),
/// when it has such a layout: one integer instruction then serves eight rows, one per lane, and
/// every scale is applied once for the eight (see `InterleavedRows`). Part of `TensorFormat`,
/// whose block size and bytes the layout rearranges (`lumen_interleave_rows`).
struct RowInterleaving: Sendable {
    /// `output[r] = row r · x` for `groupCount` groups and one vector quantized by `lumen_quantize_q8`.
    typealias Dot = @Sendable (_ groups: UnsafeRawPointer, _ groupCount: Int, _ values: UnsafePointer<Int8>,
                               _ scales: UnsafePointer<Float>, _ sums: UnsafePointer<Float>, _ count: Int,
                               _ output: UnsafeMutablePointer<Float>) -> Void

    /// The 2-byte fields (F16 scales) at the start of each block, laid out field by field before
    /// the 4-byte pieces.
    let leadingHalves: Int
    let dot: Dot

    /// Q4_0: d, then 16 bytes of nibbles (`lumen_dot_q4_0_x8_q8`).
    static let q4_0 = RowInterleaving(leadingHalves: 1, dot: { lumen_dot_q4_0_x8_q8($0, $1, $2, $3, $4, $5, $6, 0) })
    /// Q4_K: d and dmin, then packed scales and nibbles (`lumen_dot_q4_k_x8_q8`).
    static let q4_K = RowInterleaving(leadingHalves: 2, dot: { lumen_dot_q4_k_x8_q8($0, $1, $2, $3, $4, $5, $6, 0) })
}
