import CKernels
import Testing

/// The packed matrix product against the product summed in Double, for both register tiles
/// (AVX-512 where the CPU has it, AVX2), shapes with partial tiles and depth blocks on every side,
/// and operands read through strides (transposed).
struct MatrixProductTests {
    /// Deterministic values in [-1, 1).
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int(state >> 40) % 2000 - 1000) / 1000
        }
    }

    /// The product's blocks are 576 deep, 516 rows and 640 columns (MatrixProduct.c): whole tiles
    /// one block deep, a second and a third depth block, a second row block and a second column
    /// block, each with partial tiles.
    @Test(arguments: [(1, 1, 1), (5, 7, 3), (12, 32, 576), (13, 33, 577), (37, 70, 1200), (530, 45, 100), (2, 700, 20)])
    func equalsTheExactProduct(shape: (m: Int, n: Int, k: Int)) {
        let (m, n, k) = shape
        let a = Self.values(m * k, seed: 1), b = Self.values(k * n, seed: 2)
        var exact = [Double](repeating: 0, count: m * n)
        for i in 0..<m {
            for j in 0..<n {
                exact[i * n + j] = (0..<k).reduce(0.0) { $0 + Double(a[i * k + $1]) * Double(b[$1 * n + j]) }
            }
        }
        // b as stored ([k][n]) and transposed ([n][k], read with its strides swapped); a likewise.
        let bt = (0..<(n * k)).map { b[($0 % k) * n + $0 / k] }, at = (0..<(m * k)).map { a[($0 % m) * k + $0 / m] }
        for withoutAVX512: Int32 in [0, 1] {
            for (aValues, aRow, aColumn, bValues, bRow, bColumn) in [(a, k, 1, b, n, 1), (at, 1, m, bt, 1, k)] {
                var c = [Float](repeating: .nan, count: m * n)
                lumen_matrix_product_f32(m, n, k, aValues, aRow, aColumn, bValues, bRow, bColumn, &c, n, withoutAVX512)
                let worst = zip(c, exact).map { abs(Double($0) - $1) }.max()!
                // Float sums of k products of magnitude ≤ 1: within k · 2⁻²³ of the exact sum.
                #expect(worst <= Double(k) * 0x1p-23, "m \(m) n \(n) k \(k), strides \(aRow),\(aColumn) \(bRow),\(bColumn), withoutAVX512 \(withoutAVX512): off by \(worst)")
            }
        }
    }

    @Test func writesOnlyItsRowsAndColumns() {
        // c inside a wider row-major buffer: the columns past n stay untouched.
        let (m, n, k, stride) = (14, 33, 9, 40)
        let a = Self.values(m * k, seed: 3), b = Self.values(k * n, seed: 4)
        for withoutAVX512: Int32 in [0, 1] {
            var c = [Float](repeating: 7, count: m * stride)
            lumen_matrix_product_f32(m, n, k, a, k, 1, b, n, 1, &c, stride, withoutAVX512)
            #expect((0..<m).allSatisfy { i in c[(i * stride + n)..<((i + 1) * stride)].allSatisfy { $0 == 7 } })
            #expect(abs(c[0] - (0..<k).reduce(Float(0)) { $0 + a[$1] * b[$1 * n] }) < 1e-5)
        }
    }
}
