import GGUF

/// How `lumen quantize` writes one tensor type: a row quantizer, and the type it falls back to
/// for rows that are not a whole number of blocks (llama.cpp's fallbacks). `table` is the one list
/// of the types Lumen writes; the others it reads (`FormatKernels`) but does not write.
struct TypeQuantizer: Sendable {
    typealias QuantizeRow = @Sendable (_ row: UnsafePointer<Float>, _ count: Int, _ output: UnsafeMutableRawPointer) -> Void

    let quantizeRow: QuantizeRow
    /// The type used instead for rows that are not a whole number of blocks.
    let fallback: TensorType?

    /// Every type Lumen writes.
    static let table: [TensorType: TypeQuantizer] = {
        var table: [TensorType: TypeQuantizer] = [
            .f32: TypeQuantizer(quantizeRow: { row, count, output in output.copyMemory(from: row, byteCount: count * 4) }, fallback: nil),
            .f16: TypeQuantizer(quantizeRow: { row, count, output in
                for index in 0..<count { output.storeBytes(of: Float16(row[index]).bitPattern, toByteOffset: 2 * index, as: UInt16.self) }
            }, fallback: nil),
        ]
        for (type, quantizeBlock, fallback) in blockTypes {
            table[type] = TypeQuantizer(quantizeRow: BlockQuantizer.rows(of: type, quantizeBlock), fallback: fallback)
        }
        return table
    }()

    /// The block types: each with its block quantizer and fallback type.
    private static let blockTypes: [(TensorType, BlockQuantizer.QuantizeBlock, TensorType)] = [
        (.q8_0, BlockQuantizer.q8_0, .f16),
        (.q4_0, { BlockQuantizer.symmetric($0, $1, levels: 16) }, .f16),
        (.q4_1, BlockQuantizer.q4_1, .f16),
        (.q5_0, { BlockQuantizer.symmetric($0, $1, levels: 32) }, .f16),
        (.q5_1, BlockQuantizer.q5_1, .f16),
        (.q2_K, BlockQuantizer.q2_K, .q4_0),
        (.q3_K, BlockQuantizer.q3_K, .q4_0),
        (.q4_K, { BlockQuantizer.kQuant($0, $1, levels: 15) }, .q5_0),
        (.q5_K, { BlockQuantizer.kQuant($0, $1, levels: 31) }, .q5_1),
        (.q6_K, BlockQuantizer.q6_K, .q8_0),
        (.mxfp4, BlockQuantizer.mxfp4, .q8_0),
    ]
}

extension TensorType {
    /// How `lumen quantize` writes the type, when it does.
    var quantizer: TypeQuantizer? { TypeQuantizer.table[self] }
}
