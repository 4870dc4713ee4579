import CKernels

/// How a format's rows are laid out eight at a time for the matrix–vector product (generation),
/// when it has such a layout: one integer instruction then serves eight rows, one per lane, and
/// every scale is applied once for the eight (see `InterleavedRows`). Part of `TensorFormat`.
struct RowInterleaving: Sendable {
    /// Bytes of one group of eight rows of `count` weights.
    typealias GroupBytes = @Sendable (_ count: Int) -> Int
    /// Writes `groups` groups of eight rows (`rowBytes` apart) to `output`, group after group.
    typealias Interleave = @Sendable (_ rows: UnsafeRawPointer, _ rowBytes: Int, _ groups: Int, _ count: Int,
                                      _ output: UnsafeMutableRawPointer) -> Void
    /// `output[r] = row r · x` for `groupCount` groups and one vector quantized by `lumen_quantize_q8`.
    typealias Dot = @Sendable (_ groups: UnsafeRawPointer, _ groupCount: Int, _ values: UnsafePointer<Int8>,
                               _ scales: UnsafePointer<Float>, _ sums: UnsafePointer<Float>, _ count: Int,
                               _ output: UnsafeMutablePointer<Float>) -> Void

    /// Writes `groupCount` groups of rows of `count` weights back in the format's own layout, one
    /// row after another (for the prompt path's levels decoders).
    typealias Restore = @Sendable (_ groups: UnsafeRawPointer, _ groupCount: Int, _ count: Int, _ rows: UnsafeMutableRawPointer) -> Void

    let groupBytes: GroupBytes
    let interleave: Interleave
    let dot: Dot
    let restore: Restore

    /// Q4_K (`lumen_interleave_q4_k`, `lumen_dot_q4_k_x8_q8`, `lumen_restore_q4_k`).
    static let q4_K = RowInterleaving(groupBytes: { lumen_interleaved_q4_k_bytes($0) },
                                      interleave: { lumen_interleave_q4_k($0, $1, $2, $3, $4) },
                                      dot: { lumen_dot_q4_k_x8_q8($0, $1, $2, $3, $4, $5, $6, 0) },
                                      restore: { lumen_restore_q4_k($0, $1, $2, $3) })
}
