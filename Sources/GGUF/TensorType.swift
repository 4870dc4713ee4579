/// A ggml tensor element type, as GGUF files number them, with its name and block layout.
public enum TensorType: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case f32 = 0
    case f16 = 1
    case q4_0 = 2
    case q4_1 = 3
    case q5_0 = 6
    case q5_1 = 7
    case q8_0 = 8
    case q8_1 = 9
    case q2_K = 10
    case q3_K = 11
    case q4_K = 12
    case q5_K = 13
    case q6_K = 14
    case q8_K = 15
    case iq2_xxs = 16
    case iq2_xs = 17
    case iq3_xxs = 18
    case iq1_s = 19
    case iq4_nl = 20
    case iq3_s = 21
    case iq2_s = 22
    case iq4_xs = 23
    case i8 = 24
    case i16 = 25
    case i32 = 26
    case i64 = 27
    case f64 = 28
    case iq1_m = 29
    case bf16 = 30
    case tq1_0 = 34
    case tq2_0 = 35
    case mxfp4 = 39
    case nvfp4 = 40
    case q1_0 = 41

    /// Each type's name (llama.cpp's) and block layout, as ggml's `type_traits`: the one table of
    /// them. How Lumen computes with each is Inference's (`FormatKernels`), how it writes them
    /// Quantization's (`TypeQuantizer`).
    private static let layouts: [TensorType: (name: String, blockSize: Int, blockBytes: Int)] = [
        .f32: ("F32", 1, 4), .f16: ("F16", 1, 2), .bf16: ("BF16", 1, 2), .f64: ("F64", 1, 8),
        .i8: ("I8", 1, 1), .i16: ("I16", 1, 2), .i32: ("I32", 1, 4), .i64: ("I64", 1, 8),
        .q4_0: ("Q4_0", 32, 18), .q4_1: ("Q4_1", 32, 20), .q5_0: ("Q5_0", 32, 22), .q5_1: ("Q5_1", 32, 24),
        .q8_0: ("Q8_0", 32, 34), .q8_1: ("Q8_1", 32, 36),
        .q2_K: ("Q2_K", 256, 84), .q3_K: ("Q3_K", 256, 110), .q4_K: ("Q4_K", 256, 144), .q5_K: ("Q5_K", 256, 176),
        .q6_K: ("Q6_K", 256, 210), .q8_K: ("Q8_K", 256, 292),
        .iq2_xxs: ("IQ2_XXS", 256, 66), .iq2_xs: ("IQ2_XS", 256, 74), .iq3_xxs: ("IQ3_XXS", 256, 98), .iq1_s: ("IQ1_S", 256, 50),
        .iq4_nl: ("IQ4_NL", 32, 18), .iq3_s: ("IQ3_S", 256, 110), .iq2_s: ("IQ2_S", 256, 82), .iq4_xs: ("IQ4_XS", 256, 136),
        .iq1_m: ("IQ1_M", 256, 56), .tq1_0: ("TQ1_0", 256, 54), .tq2_0: ("TQ2_0", 256, 66),
        .mxfp4: ("MXFP4", 32, 17), .nvfp4: ("NVFP4", 64, 36), .q1_0: ("Q1_0", 128, 18),
    ]

    /// The type's row (every case has one; a test checks it).
    private var row: (name: String, blockSize: Int, blockBytes: Int) { Self.layouts[self] ?? ("type \(rawValue)", 1, 1) }

    /// Whether `layouts` has a row for the type.
    var hasLayout: Bool { Self.layouts[self] != nil }

    /// Elements per block and bytes per block.
    public var layout: (blockSize: Int, blockBytes: Int) { (row.blockSize, row.blockBytes) }

    /// The name llama.cpp uses, e.g. `Q4_0`.
    public var description: String { row.name }

    /// Bytes taken by `count` elements, or nil when `count` is not a whole number of blocks.
    public func byteCount(elements count: Int) -> Int? {
        let (blockSize, blockBytes) = layout
        guard count % blockSize == 0 else { return nil }
        let (bytes, overflow) = (count / blockSize).multipliedReportingOverflow(by: blockBytes)
        return overflow ? nil : bytes
    }
}
