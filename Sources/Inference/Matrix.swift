import CKernels

/// A weight matrix viewed in place in the model file: `rows` rows of `columns` elements of
/// `type`, row-major (a ggml tensor with `shape == [columns, rows]`).
///
/// Safety of `@unchecked Sendable`: `base` points into a read-only memory map that `owner` keeps
/// alive; nothing writes through it.
public struct Matrix: @unchecked Sendable {
    /// The element type.
    public let type: TensorType
    /// Number of rows (output features).
    public let rows: Int
    /// Number of columns (input features).
    public let columns: Int
    /// Bytes per row.
    public let rowBytes: Int
    let base: UnsafeRawPointer
    private let owner: MappedFile

    /// Views `tensor` of `gguf` as a matrix, checking that its type is supported.
    init(_ tensor: GGUFFile.Tensor, in gguf: GGUFFile) throws(ModelError) {
        guard tensor.type.isSupported else {
            throw ModelError(file: gguf.path, field: "tensor \(tensor.name)", reason: "tensor type \(tensor.type) is not supported (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K, Q5_K and Q6_K are)")
        }
        type = tensor.type
        columns = tensor.shape[0]
        rows = tensor.rowCount
        rowBytes = tensor.byteCount / max(1, tensor.rowCount)
        guard let address = gguf.data(of: tensor).baseAddress else {
            throw ModelError(file: gguf.path, field: "tensor \(tensor.name)", reason: "has no data")
        }
        base = address
        owner = gguf.mapping
    }

    /// Bytes of weights.
    public var byteCount: Int { rows * rowBytes }

    /// The dot product of row `row` with `x` (`columns` floats).
    @inline(__always)
    func dot(row: Int, _ x: UnsafePointer<Float>) -> Float {
        let pointer = base + row * rowBytes
        switch type {
        case .f32: return Kernels.dotF32(pointer, x, columns)
        case .f16: return lumen_dot_f16(pointer, x, columns)
        case .bf16: return Kernels.dotBF16(pointer, x, columns)
        case .q8_0: return lumen_dot_q8_0(pointer, x, columns)
        case .q4_0: return lumen_dot_q4_0(pointer, x, columns)
        case .q5_0: return lumen_dot_q5_0(pointer, x, columns)
        case .q4_K: return lumen_dot_q4_k(pointer, x, columns)
        case .q5_K: return lumen_dot_q5_k(pointer, x, columns)
        case .q6_K: return lumen_dot_q6_k(pointer, x, columns)
        default: return .nan
        }
    }

    /// The dot product of row `row` with the 8-bit activations in `activations` (see `lumen_quantize_q8`).
    @inline(__always)
    func dot(row: Int, quantized activations: MatrixPool.Scratch) -> Float {
        let pointer = base + row * rowBytes
        let values = activations.quantizedValues, scales = activations.quantizedScales, sums = activations.quantizedSums
        switch type {
        case .q8_0: return lumen_dot_q8_0_q8(pointer, values, scales, columns)
        case .q4_0: return lumen_dot_q4_0_q8(pointer, values, scales, sums, columns, 0)
        case .q5_0: return lumen_dot_q5_0_q8(pointer, values, scales, sums, columns, 0)
        case .q4_K: return lumen_dot_q4_k_q8(pointer, values, scales, sums, columns, 0)
        case .q5_K: return lumen_dot_q5_k_q8(pointer, values, scales, sums, columns, 0)
        case .q6_K: return lumen_dot_q6_k_q8(pointer, values, scales, columns, 0)
        default: return .nan
        }
    }

    /// Writes row `row` as floats into `output` (`columns` floats).
    func dequantize(row: Int, into output: UnsafeMutablePointer<Float>) {
        Kernels.dequantize(type, base + row * rowBytes, into: output, count: columns)
    }
}
