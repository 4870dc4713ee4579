import CKernels

/// Products of F32 matrices in memory through the C kernels, single-threaded (callers split the
/// result across threads): the packed matrix product, any strides, and rows times vectors.
package enum FloatProducts {
    /// `c = a · b` for `m` × `k` `a` and `k` × `n` `b`: a's (i, p) at `a[i * aRow + p * aColumn]`,
    /// b's (p, j) at `b[p * bRow + j * bColumn]`, c's (i, j) written at `c[i * cRow + j]`
    /// (`lumen_matrix_product_f32`; AVX-512 tiles where the CPU has them).
    package static func matrixProduct(m: Int, n: Int, k: Int, a: UnsafePointer<Float>, aRow: Int, aColumn: Int,
                                      b: UnsafePointer<Float>, bRow: Int, bColumn: Int, c: UnsafeMutablePointer<Float>, cRow: Int) {
        lumen_matrix_product_f32(m, n, k, a, aRow, aColumn, b, bRow, bColumn, c, cRow, 0)
    }

    /// `out[t * outStride + r] = w[r] · x[t]` for `rows` rows of `w` (`rowStride` floats apart)
    /// and `tokens` vectors of `k` floats (`k` floats apart): `lumen_matmul_f32`.
    package static func rowsTimesVectors(_ w: UnsafePointer<Float>, rowStride: Int, rows: Int, _ x: UnsafePointer<Float>, tokens: Int, k: Int,
                                         into out: UnsafeMutablePointer<Float>, outStride: Int) {
        lumen_matmul_f32(w, rowStride, rows, x, tokens, k, out, outStride)
    }
}
