/// A ggml tensor element type, as GGUF files number them, with its block layout.
///
/// Formats are data: `TensorFormat.table` describes each (layout, kernels, quantizer, fallback).
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

    /// The format's description in `TensorFormat.table`.
    var format: TensorFormat {
        // The table has an entry for every case (a test checks it).
        TensorFormat.table[self] ?? TensorFormat("type \(rawValue)", blockSize: 1, blockBytes: 1)
    }

    /// Elements per block and bytes per block.
    public var layout: (blockSize: Int, blockBytes: Int) { (format.blockSize, format.blockBytes) }

    /// Whether Lumen can compute with this type.
    public var isSupported: Bool { format.isComputable }

    /// Whether the type has an integer dot product with 8-bit quantized activations.
    public var hasQuantizedDot: Bool { format.kernels?.quantizedDot != nil }

    /// The name llama.cpp uses, e.g. `Q4_0`.
    public var description: String { format.name }

    /// The names of the types Lumen computes with, for messages.
    public static var supportedNames: String {
        allCases.filter(\.isSupported).map(\.description).joined(separator: ", ")
    }

    /// Bytes taken by `count` elements, or nil when `count` is not a whole number of blocks.
    public func byteCount(elements count: Int) -> Int? {
        let (blockSize, blockBytes) = layout
        guard count % blockSize == 0 else { return nil }
        let (bytes, overflow) = (count / blockSize).multipliedReportingOverflow(by: blockBytes)
        return overflow ? nil : bytes
    }
}
