import CKernels

/// How Lumen stores and computes with one tensor type, as ggml's `type_traits` describes it: the
/// block layout, the compute kernels (`FormatKernels`: the C format table's row of the same
/// name), how to quantize a row into it, and the type a quantizer falls back to when a row is not
/// a whole number of blocks.
///
/// This table is the one place a format is described: `TensorType`, `Matrix`, `MatrixPool`,
/// `BlockQuantizer` and the quantizer all dispatch through it. Missing kernels mean the format
/// cannot be computed with, and callers turn that into an error naming the type.
struct TensorFormat: Sendable {
    typealias QuantizeRow = @Sendable (_ row: UnsafePointer<Float>, _ count: Int, _ output: UnsafeMutableRawPointer) -> Void

    /// llama.cpp's name, e.g. `Q4_K`.
    let name: String
    /// Elements per block.
    let blockSize: Int
    /// Bytes per block.
    let blockBytes: Int
    /// The compute kernels, when the format has them.
    let kernels: FormatKernels?
    let quantizeRow: QuantizeRow?
    /// The type used instead for rows that are not a whole number of blocks.
    let fallback: TensorType?

    init(_ name: String, blockSize: Int, blockBytes: Int, quantizeRow: QuantizeRow? = nil, fallback: TensorType? = nil) {
        self.name = name
        self.blockSize = blockSize
        self.blockBytes = blockBytes
        kernels = FormatKernels.byName[name]
        self.quantizeRow = quantizeRow
        self.fallback = fallback
    }

    /// Whether matrices of this type can be computed with.
    var isComputable: Bool { kernels != nil }

    /// Every type GGUF numbers, by type; the types Lumen only describes have a layout and no kernels.
    static let table: [TensorType: TensorFormat] = [
        .f32: TensorFormat("F32", blockSize: 1, blockBytes: 4,
                           quantizeRow: { row, count, output in output.copyMemory(from: row, byteCount: count * 4) }),
        .f16: TensorFormat("F16", blockSize: 1, blockBytes: 2,
                           quantizeRow: { row, count, output in
                               for index in 0..<count { output.storeBytes(of: Float16(row[index]).bitPattern, toByteOffset: 2 * index, as: UInt16.self) }
                           }),
        .bf16: TensorFormat("BF16", blockSize: 1, blockBytes: 2),
        .q8_0: TensorFormat("Q8_0", blockSize: 32, blockBytes: 34,
                            quantizeRow: BlockQuantizer.rows(of: 32, blockBytes: 34, BlockQuantizer.q8_0), fallback: .f16),
        .q4_0: TensorFormat("Q4_0", blockSize: 32, blockBytes: 18,
                            quantizeRow: BlockQuantizer.rows(of: 32, blockBytes: 18) { BlockQuantizer.symmetric($0, $1, levels: 16) }, fallback: .f16),
        .q4_1: TensorFormat("Q4_1", blockSize: 32, blockBytes: 20,
                            quantizeRow: BlockQuantizer.rows(of: 32, blockBytes: 20, BlockQuantizer.q4_1), fallback: .f16),
        .q5_0: TensorFormat("Q5_0", blockSize: 32, blockBytes: 22,
                            quantizeRow: BlockQuantizer.rows(of: 32, blockBytes: 22) { BlockQuantizer.symmetric($0, $1, levels: 32) }, fallback: .f16),
        .q5_1: TensorFormat("Q5_1", blockSize: 32, blockBytes: 24,
                            quantizeRow: BlockQuantizer.rows(of: 32, blockBytes: 24, BlockQuantizer.q5_1), fallback: .f16),
        .q8_1: TensorFormat("Q8_1", blockSize: 32, blockBytes: 36),
        .q2_K: TensorFormat("Q2_K", blockSize: 256, blockBytes: 84,
                            quantizeRow: BlockQuantizer.rows(of: 256, blockBytes: 84, BlockQuantizer.q2_K), fallback: .q4_0),
        .q3_K: TensorFormat("Q3_K", blockSize: 256, blockBytes: 110,
                            quantizeRow: BlockQuantizer.rows(of: 256, blockBytes: 110, BlockQuantizer.q3_K), fallback: .q4_0),
        .q4_K: TensorFormat("Q4_K", blockSize: 256, blockBytes: 144,
                            quantizeRow: BlockQuantizer.rows(of: 256, blockBytes: 144) { BlockQuantizer.kQuant($0, $1, levels: 15) }, fallback: .q5_0),
        .q5_K: TensorFormat("Q5_K", blockSize: 256, blockBytes: 176,
                            quantizeRow: BlockQuantizer.rows(of: 256, blockBytes: 176) { BlockQuantizer.kQuant($0, $1, levels: 31) }, fallback: .q5_1),
        .q6_K: TensorFormat("Q6_K", blockSize: 256, blockBytes: 210,
                            quantizeRow: BlockQuantizer.rows(of: 256, blockBytes: 210, BlockQuantizer.q6_K), fallback: .q8_0),
        .q8_K: TensorFormat("Q8_K", blockSize: 256, blockBytes: 292),
        .iq4_nl: TensorFormat("IQ4_NL", blockSize: 32, blockBytes: 18),
        .iq4_xs: TensorFormat("IQ4_XS", blockSize: 256, blockBytes: 136),
        .iq2_xxs: TensorFormat("IQ2_XXS", blockSize: 256, blockBytes: 66),
        .iq2_xs: TensorFormat("IQ2_XS", blockSize: 256, blockBytes: 74),
        .iq3_xxs: TensorFormat("IQ3_XXS", blockSize: 256, blockBytes: 98),
        .iq1_s: TensorFormat("IQ1_S", blockSize: 256, blockBytes: 50),
        .iq3_s: TensorFormat("IQ3_S", blockSize: 256, blockBytes: 110),
        .iq2_s: TensorFormat("IQ2_S", blockSize: 256, blockBytes: 82),
        .iq1_m: TensorFormat("IQ1_M", blockSize: 256, blockBytes: 56),
        .i8: TensorFormat("I8", blockSize: 1, blockBytes: 1),
        .i16: TensorFormat("I16", blockSize: 1, blockBytes: 2),
        .i32: TensorFormat("I32", blockSize: 1, blockBytes: 4),
        .i64: TensorFormat("I64", blockSize: 1, blockBytes: 8),
        .f64: TensorFormat("F64", blockSize: 1, blockBytes: 8),
        .tq1_0: TensorFormat("TQ1_0", blockSize: 256, blockBytes: 54),
        .tq2_0: TensorFormat("TQ2_0", blockSize: 256, blockBytes: 66),
        .mxfp4: TensorFormat("MXFP4", blockSize: 32, blockBytes: 17),
        .nvfp4: TensorFormat("NVFP4", blockSize: 64, blockBytes: 36),
        .q1_0: TensorFormat("Q1_0", blockSize: 128, blockBytes: 18),
    ]
}
