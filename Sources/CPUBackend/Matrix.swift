import CKernels
import GGUF

/// A weight matrix viewed in place in the model file: `rows` rows of `columns` elements of
/// `type`, row-major (a ggml tensor with `shape == [columns, rows]`). When the format has an
/// eight-row layout for generation, the rows are also copied into it (`interleaved`) and the
/// file's pages dropped; the view then reads them back from the file only when asked.
///
/// Safety of `@unchecked Sendable`: `base` points into a read-only memory map that `owner` keeps
/// alive; nothing writes through it.
public struct Matrix: @unchecked Sendable {
    /// The element type.
    public let type: TensorType
    /// Number of rows (output features).
    public private(set) var rows: Int
    /// Number of columns (input features).
    public let columns: Int
    /// Bytes per row.
    public let rowBytes: Int
    package private(set) var base: UnsafeRawPointer
    private let owner: MappedFile
    /// The format's compute kernels.
    package let kernels: FormatKernels
    /// The rows in the format's eight-row layout for generation, when it has one (`InterleavedRows`).
    private var interleaved: InterleavedRows?
    /// The group of `interleaved` this matrix's first row is in (a part of a fused tensor starts
    /// past the first).
    package private(set) var firstGroup = 0

    /// Views `tensor` of `gguf` as a matrix, checking that its type is supported; with
    /// `interleaving`, copies it into its format's eight-row layout, when there is one (for a
    /// matrix that multiplies vectors, not one that is only looked up by row).
    package init(_ tensor: GGUFFile.Tensor, in gguf: GGUFFile, interleaving: Bool) throws(ModelError) {
        guard let kernels = tensor.type.kernels else {
            throw ModelError(file: gguf.path, field: "tensor \(tensor.name)", reason: "tensor type \(tensor.type) is not supported (\(TensorType.supportedNames) are)")
        }
        self.kernels = kernels
        type = tensor.type
        columns = tensor.shape[0]
        rows = tensor.rowCount
        rowBytes = tensor.byteCount / max(1, tensor.rowCount)
        guard let address = gguf.data(of: tensor).baseAddress else {
            throw ModelError(file: gguf.path, field: "tensor \(tensor.name)", reason: "has no data")
        }
        base = address
        owner = gguf.mapping
        if interleaving, let copy = InterleavedRows(tensor.type, rows: address, rowBytes: rowBytes, rows: rows, columns: columns) {
            interleaved = copy
            gguf.mapping.evict(UnsafeRawBufferPointer(start: address, count: byteCount))
        }
    }

    /// Group `group` of this matrix (its rows from 8 · `group`) in the eight-row layout, the
    /// groups after it following `rows.groupBytes` apart, with the copy they are in, when the
    /// matrix has that layout.
    package func interleavedGroups(from group: Int) -> (start: UnsafeRawPointer, rows: InterleavedRows)? {
        interleaved.map { ($0.base + (firstGroup + group) * $0.groupBytes, $0) }
    }

    /// Bytes of weights.
    public var byteCount: Int { rows * rowBytes }

    /// Rows `range` of this matrix, as a matrix of their own: the parts of a fused tensor (Phi-3's
    /// QKV and gate–up matrices).
    package func rows(_ range: Range<Int>) -> Matrix {
        var part = self
        part.base = base + range.lowerBound * rowBytes
        part.rows = range.count
        if range.lowerBound % 8 == 0 && range.count % 8 == 0 {
            part.firstGroup = firstGroup + range.lowerBound / 8
        } else {
            part.interleaved = nil
        }
        return part
    }

    /// The dot product of row `row` with `x` (`columns` floats).
    @inline(__always)
    package func dot(row: Int, _ x: UnsafePointer<Float>) -> Float {
        kernels.dot(base + row * rowBytes, x, columns)
    }

    /// Writes row `row` as floats into `output` (`columns` floats).
    package func dequantize(row: Int, into output: UnsafeMutablePointer<Float>) {
        kernels.dequantize(base + row * rowBytes, output, columns)
    }
}
