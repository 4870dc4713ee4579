import GGUF

/// How Lumen computes with one tensor type, beside its layout (GGUF's `TensorType`), as ggml's
/// `type_traits_cpu` beside its `type_traits`: the compute kernels (`FormatKernels`: the C
/// format table's row of the type's name), and for the types `lumen quantize` writes, how to
/// quantize a row and the type a quantizer falls back to when a row is not a whole number of
/// blocks.
///
/// `TensorType.format` is the one place a format's computing is described: `Matrix`,
/// `MatrixPool`, `BlockQuantizer` and the quantizer all dispatch through it. Missing kernels
/// mean the format cannot be computed with, and callers turn that into an error naming the type.
struct TensorFormat: Sendable {
    typealias QuantizeRow = @Sendable (_ row: UnsafePointer<Float>, _ count: Int, _ output: UnsafeMutableRawPointer) -> Void

    /// The compute kernels, when the format has them.
    let kernels: FormatKernels?
    let quantizeRow: QuantizeRow?
    /// The type used instead for rows that are not a whole number of blocks.
    let fallback: TensorType?

    /// Whether matrices of this type can be computed with.
    var isComputable: Bool { kernels != nil }

    /// The format of every type.
    static let table: [TensorType: TensorFormat] = Dictionary(uniqueKeysWithValues: TensorType.allCases.map { type in
        (type, TensorFormat(kernels: FormatKernels.byName[type.description], quantizeRow: quantizers[type]?.row, fallback: quantizers[type]?.fallback))
    })

    /// The types `lumen quantize` writes: how to quantize a row, and the fallback type.
    private static let quantizers: [TensorType: (row: QuantizeRow, fallback: TensorType?)] = [
        .f32: ({ row, count, output in output.copyMemory(from: row, byteCount: count * 4) }, nil),
        .f16: ({ row, count, output in
            for index in 0..<count { output.storeBytes(of: Float16(row[index]).bitPattern, toByteOffset: 2 * index, as: UInt16.self) }
        }, nil),
        .q8_0: (BlockQuantizer.rows(of: 32, blockBytes: 34, BlockQuantizer.q8_0), .f16),
        .q4_0: (BlockQuantizer.rows(of: 32, blockBytes: 18) { BlockQuantizer.symmetric($0, $1, levels: 16) }, .f16),
        .q4_1: (BlockQuantizer.rows(of: 32, blockBytes: 20, BlockQuantizer.q4_1), .f16),
        .q5_0: (BlockQuantizer.rows(of: 32, blockBytes: 22) { BlockQuantizer.symmetric($0, $1, levels: 32) }, .f16),
        .q5_1: (BlockQuantizer.rows(of: 32, blockBytes: 24, BlockQuantizer.q5_1), .f16),
        .q2_K: (BlockQuantizer.rows(of: 256, blockBytes: 84, BlockQuantizer.q2_K), .q4_0),
        .q3_K: (BlockQuantizer.rows(of: 256, blockBytes: 110, BlockQuantizer.q3_K), .q4_0),
        .q4_K: (BlockQuantizer.rows(of: 256, blockBytes: 144) { BlockQuantizer.kQuant($0, $1, levels: 15) }, .q5_0),
        .q5_K: (BlockQuantizer.rows(of: 256, blockBytes: 176) { BlockQuantizer.kQuant($0, $1, levels: 31) }, .q5_1),
        .q6_K: (BlockQuantizer.rows(of: 256, blockBytes: 210, BlockQuantizer.q6_K), .q8_0),
    ]
}

extension TensorType {
    /// How Lumen computes with the type.
    var format: TensorFormat {
        // The table has an entry for every case.
        TensorFormat.table[self] ?? TensorFormat(kernels: nil, quantizeRow: nil, fallback: nil)
    }

    /// Whether Lumen can compute with this type.
    public var isSupported: Bool { format.isComputable }

    /// Whether the type has an integer dot product with 8-bit quantized activations.
    public var hasQuantizedDot: Bool { format.kernels?.quantizedDot != nil }

    /// The names of the types Lumen computes with, for messages.
    public static var supportedNames: String {
        allCases.filter(\.isSupported).map(\.description).joined(separator: ", ")
    }
}
