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

/// NumPy's `.npz` format: a zip archive of `.npy` files, stored uncompressed, so Python reads
/// several arrays at once with `numpy.load`.
public enum NumPyArchive {
    /// Why an archive cannot be written.
    public struct TooLarge: Error, CustomStringConvertible {
        /// The archive's size in bytes.
        public let bytes: Int
        public var description: String { "the archive would be \(bytes) bytes; .npz without zip64 holds at most 4 GiB" }
    }

    /// The archive bytes of `arrays`, each `name.npy` (as `numpy.savez(file, name=array, …)`
    /// writes), in order.
    public static func encode(_ arrays: [(name: String, values: [Float], shape: [Int])]) throws(TooLarge) -> Data {
        var archive = Data(), directory = Data()
        func append16(_ value: Int, to data: inout Data) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { data.append(contentsOf: $0) } }
        func append32(_ value: Int, to data: inout Data) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { data.append(contentsOf: $0) } }
        for array in arrays {
            let file = NumPyFile.encode(array.values, shape: array.shape), name = Array((array.name + ".npy").utf8)
            let offset = archive.count, checksum = Int(CRC32.checksum(file))
            guard offset + file.count < Int(UInt32.max) else { throw TooLarge(bytes: offset + file.count) }
            // Local file header: version 2.0, no flags, stored, 1980-01-01 00:00.
            append32(0x0403_4b50, to: &archive)
            for field in [20, 0, 0, 0, 0x21] { append16(field, to: &archive) }
            for field in [checksum, file.count, file.count] { append32(field, to: &archive) }
            append16(name.count, to: &archive)
            append16(0, to: &archive)
            archive.append(contentsOf: name)
            archive.append(file)
            // Its central directory entry.
            append32(0x0201_4b50, to: &directory)
            for field in [20, 20, 0, 0, 0, 0x21] { append16(field, to: &directory) }
            for field in [checksum, file.count, file.count] { append32(field, to: &directory) }
            for field in [name.count, 0, 0, 0, 0] { append16(field, to: &directory) }
            append32(0, to: &directory)
            append32(offset, to: &directory)
            directory.append(contentsOf: name)
        }
        let directoryOffset = archive.count
        archive.append(directory)
        append32(0x0605_4b50, to: &archive)
        for field in [0, 0, arrays.count, arrays.count] { append16(field, to: &archive) }
        append32(directory.count, to: &archive)
        append32(directoryOffset, to: &archive)
        append16(0, to: &archive)
        return archive
    }
}

/// The CRC-32 of zip archives (IEEE 802.3, reflected polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { byte in
        (0..<8).reduce(UInt32(byte)) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }

    /// The checksum of `data`.
    static func checksum(_ data: Data) -> UInt32 {
        ~data.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
