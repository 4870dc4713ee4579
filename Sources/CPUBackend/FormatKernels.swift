import CKernels
import GGUF

/// One format's compute kernels: its row of the C format table (`Formats.c`, ggml's
/// `type_traits_cpu`), found by llama.cpp's name of the format, from the kernel variant this
/// process runs. Every kernel of every format has one signature, so the callers dispatch without
/// knowing the format.
package struct FormatKernels: Sendable {
    /// Writes `count` weights of a row as floats.
    package typealias Dequantize = @convention(c) (_ row: UnsafeRawPointer?, _ output: UnsafeMutablePointer<Float>?, _ count: Int) -> Void
    /// Row · F32 activations, exactly.
    package typealias Dot = @convention(c) (_ row: UnsafeRawPointer?, _ x: UnsafePointer<Float>?, _ count: Int) -> Float
    /// Row · 8-bit activations from `lumen_quantize_q8`; `withoutVNNI` non-zero picks the AVX2
    /// kernel on a CPU with AVX-512 VNNI (the tests compare the two).
    package typealias QuantizedDot = @convention(c) (_ row: UnsafeRawPointer?, _ values: UnsafePointer<Int8>?, _ scales: UnsafePointer<Float>?,
                                             _ sums: UnsafePointer<Float>?, _ count: Int, _ withoutVNNI: Int32) -> Float
    /// `QuantizedDot` of `rowCount` rows `rowBytes` apart with several tokens whose activations
    /// follow one another, row r's with token t into `output[t * outputStride + r]`: bit for bit
    /// its results, each row read once.
    package typealias QuantizedDotTokens = @convention(c) (_ rows: UnsafeRawPointer?, _ rowBytes: Int, _ rowCount: Int, _ values: UnsafePointer<Int8>?,
                                                   _ scales: UnsafePointer<Float>?, _ sums: UnsafePointer<Float>?, _ count: Int, _ tokens: Int,
                                                   _ output: UnsafeMutablePointer<Float>?, _ outputStride: Int, _ withoutVNNI: Int32) -> Void
    /// `output[r] += (row r · x) × factor` for `rowCount` rows `rowBytes` apart, each dot `Dot`'s to
    /// the bit: a low-rank adapter's `B (A x)` added to the rows it adapts.
    package typealias AddScaledDots = @convention(c) (_ rows: UnsafeRawPointer?, _ rowBytes: Int, _ rowCount: Int, _ x: UnsafePointer<Float>?, _ count: Int,
                                              _ factor: Float, _ output: UnsafeMutablePointer<Float>?) -> Void
    /// Decodes a row as levels, scales and mins (see `lumen_levels_fn`), for the integer
    /// matrix–matrix product every quantized format shares.
    package typealias Levels = lumen_levels_fn

    package let dequantize: Dequantize
    package let dot: Dot
    /// Scaled dots added to rows, for the formats that multiply with F32 activations.
    package let addScaledDots: AddScaledDots?
    /// The integer dot with 8-bit activations, when the format has one.
    package let quantizedDot: QuantizedDot?
    /// The integer dot for several tokens at once: every format with `quantizedDot` has one.
    package let quantizedDotTokens: QuantizedDotTokens?
    /// The row decoder for prompt batches, when the format has one.
    package let levels: Levels?
    /// The eight-row layout for generation, when the format has one.
    package let interleaving: RowInterleaving?

    /// The C table's rows, in order, as the kernel variant this process runs gives them.
    private static var tableRows: [lumen_format_kernels] {
        var rows: [lumen_format_kernels] = []
        while let row = lumen_format_kernels_at(rows.count)?.pointee { rows.append(row) }
        return rows
    }

    /// The rows of the C table, by name; a row without the two kernels every computable format
    /// has is left out (a test checks there is none).
    package static let byName: [String: FormatKernels] = Dictionary(uniqueKeysWithValues: tableRows.compactMap { row in
        guard let name = row.name, let dequantize = row.dequantize, let dot = row.dot else { return nil }
        return (String(cString: name), FormatKernels(
            dequantize: dequantize, dot: dot, addScaledDots: row.add_scaled_dots, quantizedDot: row.dot_q8, quantizedDotTokens: row.dot_q8_tokens, levels: row.levels,
            interleaving: row.dot_x8_q8.map { RowInterleaving(leadingHalves: row.x8_leading_halves, dot: $0, dotTokens: row.dot_x8_q8_tokens) }))
    })

    /// The rows by tensor type.
    package static let byType: [TensorType: FormatKernels] = Dictionary(uniqueKeysWithValues: TensorType.allCases.compactMap { type in
        byName[type.description].map { (type, $0) }
    })

    /// The names of the C table's rows, in order, complete or not (for the test that every row
    /// names a GGUF type and has its kernels).
    package static var tableNames: [String] { tableRows.map { $0.name.map { String(cString: $0) } ?? "" } }
}

extension TensorType {
    /// How Lumen computes with the type (ggml's `type_traits_cpu` beside GGUF's layout): its row of
    /// the C format table, or nil when Lumen cannot compute with it.
    package var kernels: FormatKernels? { FormatKernels.byType[self] }

    /// Whether Lumen can compute with this type.
    public var isSupported: Bool { kernels != nil }

    /// Whether the type has an integer dot product with 8-bit quantized activations.
    public var hasQuantizedDot: Bool { kernels?.quantizedDot != nil }

    /// The names of the types Lumen computes with, for messages.
    public static var supportedNames: String {
        allCases.filter(\.isSupported).map(\.description).joined(separator: ", ")
    }
}
