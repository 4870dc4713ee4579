/// A ggml tensor element type, as GGUF files number them, with its block layout.
///
/// Formats are data: `layout` says how many elements a block holds and how many bytes it takes;
/// the kernels that dequantize and multiply each type dispatch on the type.
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
    case bf16 = 30

    /// Elements per block and bytes per block.
    public var layout: (blockSize: Int, blockBytes: Int) {
        switch self {
        case .f32: (1, 4)
        case .f16, .bf16: (1, 2)
        case .q4_0: (32, 18)
        case .q4_1: (32, 20)
        case .q5_0: (32, 22)
        case .q5_1: (32, 24)
        case .q8_0: (32, 34)
        case .q8_1: (32, 36)
        case .q2_K: (256, 84)
        case .q3_K: (256, 110)
        case .q4_K: (256, 144)
        case .q5_K: (256, 176)
        case .q6_K: (256, 210)
        case .q8_K: (256, 292)
        }
    }

    /// Whether Lumen can compute with this type.
    public var isSupported: Bool {
        switch self {
        case .f32, .f16, .bf16, .q8_0, .q4_0, .q5_0, .q4_K, .q5_K, .q6_K: true
        default: false
        }
    }

    /// Whether the type has an integer dot product with 8-bit quantized activations.
    public var hasQuantizedDot: Bool {
        switch self {
        case .q8_0, .q4_0, .q5_0, .q4_K, .q5_K, .q6_K: true
        default: false
        }
    }

    /// The name llama.cpp uses, e.g. `Q4_0`.
    public var description: String {
        switch self {
        case .f32: "F32"
        case .f16: "F16"
        case .bf16: "BF16"
        case .q4_0: "Q4_0"
        case .q4_1: "Q4_1"
        case .q5_0: "Q5_0"
        case .q5_1: "Q5_1"
        case .q8_0: "Q8_0"
        case .q8_1: "Q8_1"
        case .q2_K: "Q2_K"
        case .q3_K: "Q3_K"
        case .q4_K: "Q4_K"
        case .q5_K: "Q5_K"
        case .q6_K: "Q6_K"
        case .q8_K: "Q8_K"
        }
    }

    /// Bytes taken by `count` elements, or nil when `count` is not a whole number of blocks.
    public func byteCount(elements count: Int) -> Int? {
        let (blockSize, blockBytes) = layout
        guard count % blockSize == 0 else { return nil }
        let (bytes, overflow) = (count / blockSize).multipliedReportingOverflow(by: blockBytes)
        return overflow ? nil : bytes
    }
}
