import Foundation

/// NumPy's `.npy` format (version 1.0) for float32 arrays, so Python reads captured activations
/// with `numpy.load`.
public enum NumPyFile {
    /// The file bytes of `values`, little-endian float32 in C order, with `shape`.
    public static func encode(_ values: [Float], shape: [Int]) -> Data {
        precondition(shape.reduce(1, *) == values.count, "\(values.count) values for shape \(shape)")
        let dimensions = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': \(dimensions), }"
        // Magic (6), version (2) and length (2), then the header padded with spaces to a multiple
        // of 64 and ended by a newline.
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var data = Data([0x93] + Array("NUMPY".utf8) + [1, 0])
        withUnsafeBytes(of: UInt16(header.utf8.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: header.utf8)
        values.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }
}
