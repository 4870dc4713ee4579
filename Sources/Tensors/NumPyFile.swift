import Foundation

/// NumPy's `.npy` format: float32 arrays written (version 1.0) so Python reads captured
/// activations with `numpy.load`, and arrays of any numeric type read as float32 so what
/// `numpy.save` wrote can be computed with.
public enum NumPyFile {
    /// Why a file is not an array Lumen reads, naming the field.
    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The element types read, by NumPy's `descr` without its byte order: their size, and how
    /// one little-endian element becomes a float.
    private static let elementTypes: [String: (size: Int, read: @Sendable (UnsafeRawBufferPointer, Int) -> Float)] = [
        "f4": (4, { Float(bitPattern: $0.loadUnaligned(fromByteOffset: $1, as: UInt32.self).littleEndian) }),
        "f8": (8, { Float(Double(bitPattern: $0.loadUnaligned(fromByteOffset: $1, as: UInt64.self).littleEndian)) }),
        "f2": (2, { Float(Float16(bitPattern: $0.loadUnaligned(fromByteOffset: $1, as: UInt16.self).littleEndian)) }),
        "i1": (1, { Float(Int8(bitPattern: $0[$1])) }),
        "u1": (1, { Float($0[$1]) }),
        "b1": (1, { $0[$1] == 0 ? 0 : 1 }),
        "i2": (2, { Float(Int16(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: Int16.self))) }),
        "u2": (2, { Float(UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: UInt16.self))) }),
        "i4": (4, { Float(Int32(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: Int32.self))) }),
        "u4": (4, { Float(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: UInt32.self))) }),
        "i8": (8, { Float(Int64(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: Int64.self))) }),
        "u8": (8, { Float(UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: $1, as: UInt64.self))) }),
    ]

    /// The array in `data` (any version; little-endian float, integer or bool elements; C or
    /// Fortran order) as float32 values in C order with its shape.
    public static func decode(_ data: Data) throws(FormatError) -> (values: [Float], shape: [Int]) {
        let bytes = [UInt8](data)
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1..<6]) == Array("NUMPY".utf8) else { throw FormatError("not a .npy file: it does not start with \\x93NUMPY") }
        let version = bytes[6]
        let headerLength = version == 1 ? Int(bytes[8]) | Int(bytes[9]) << 8 : bytes.count >= 12 ? Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24 : -1
        let headerStart = version == 1 ? 10 : 12
        guard (1...3).contains(version), headerLength >= 0, headerStart + headerLength <= bytes.count else { throw FormatError("a .npy header of version \(version) that does not fit the file") }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard let descr = field("descr", in: header), let order = field("fortran_order", in: header), let shapeText = field("shape", in: header) else {
            throw FormatError("a .npy header without descr, fortran_order and shape: \(header.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let typeName = descr.trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
        guard let byteOrder = typeName.first, "<|=".contains(byteOrder), let type = elementTypes[String(typeName.dropFirst())] else {
            throw FormatError("elements of type \(typeName) cannot be read: little-endian floats, integers and bools can")
        }
        let dimensions = shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "() ")).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let shape = dimensions.compactMap { Int($0) }
        guard shape.count == dimensions.count, shape.allSatisfy({ $0 >= 0 }) else { throw FormatError("a .npy shape that is not a tuple of lengths: \(shapeText)") }
        guard shape.count <= Tensor.maximumRank else { throw FormatError("a .npy of \(shape.count) axes; NumPy's arrays have at most \(Tensor.maximumRank)") }
        // A shape whose element count overflows cannot fit any file.
        let count = shape.reduce(1) { product, length in
            let (next, overflow) = product.multipliedReportingOverflow(by: length)
            return overflow ? Int.max / 16 : next
        }
        let start = headerStart + headerLength
        guard bytes.count - start == count * type.size else {
            throw FormatError("a .npy of shape \(shape) and type \(typeName) needs \(count * type.size) bytes of data, the file has \(bytes.count - start)")
        }
        var values = [Float](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            for index in 0..<count { values[index] = type.read(raw, start + index * type.size) }
        }
        guard order == "True" else { return (values, shape) }
        // Fortran order: the first axis fastest, which is the C order of the reversed shape.
        let reversed = Tensor(values, shape: shape.reversed())
        return (Array(reversed.transposed(Array((0..<shape.count).reversed())).values), shape)
    }

    /// The text of `key`'s value in a .npy header's Python dictionary.
    private static func field(_ key: String, in header: String) -> String? {
        guard let keyRange = header.range(of: "'\(key)'") ?? header.range(of: "\"\(key)\""),
              let colon = header[keyRange.upperBound...].firstIndex(of: ":") else { return nil }
        let rest = header[header.index(after: colon)...].drop(while: { $0 == " " })
        if rest.first == "(" { return rest.firstIndex(of: ")").map { String(rest[...$0]) } }
        return String(rest.prefix { $0 != "," && $0 != "}" }).trimmingCharacters(in: .whitespaces)
    }

    /// The file bytes of `values`, little-endian float32 in C order, with `shape`.
    public static func encode(_ values: TensorValues, shape: [Int]) -> Data {
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
        values.withUnsafeBufferPointer { data.append($0) }
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
    public static func encode(_ arrays: [(name: String, values: TensorValues, shape: [Int])]) throws(TooLarge) -> Data {
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

    /// The arrays of an archive `numpy.savez` wrote, by name without `.npy`, in order: its
    /// stored (uncompressed) entries, zip64 sizes included. `numpy.savez_compressed`'s deflated
    /// entries are an error saying so.
    public static func decode(_ data: Data) throws(NumPyFile.FormatError) -> [(name: String, values: [Float], shape: [Int])] {
        let bytes = [UInt8](data)
        func integer(_ offset: Int, _ size: Int) throws(NumPyFile.FormatError) -> Int {
            guard offset >= 0, offset + size <= bytes.count else { throw NumPyFile.FormatError("a .npz whose zip structure points past its end") }
            return (0..<size).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
        }
        // The end of the central directory: the last of its signature within the final 64 KiB.
        guard let end = stride(from: bytes.count - 22, through: Swift.max(0, bytes.count - 65_557), by: -1).first(where: { (try? integer($0, 4)) == 0x0605_4b50 }) else {
            throw NumPyFile.FormatError("not a .npz file: no zip directory")
        }
        let entries = try integer(end + 10, 2)
        var offset = try integer(end + 16, 4)
        var arrays: [(name: String, values: [Float], shape: [Int])] = []
        for _ in 0..<entries {
            guard try integer(offset, 4) == 0x0201_4b50 else { throw NumPyFile.FormatError("a .npz whose zip directory is damaged") }
            let method = try integer(offset + 10, 2)
            var size = try integer(offset + 20, 4)
            let nameLength = try integer(offset + 28, 2), extraLength = try integer(offset + 30, 2), commentLength = try integer(offset + 32, 2)
            var local = try integer(offset + 42, 4)
            guard offset + 46 + nameLength <= bytes.count else { throw NumPyFile.FormatError("a .npz whose zip directory is damaged") }
            let name = String(decoding: bytes[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self)
            // zip64: the sizes and offset that do not fit 32 bits are in the extra field 0x0001,
            // in the order uncompressed size, compressed size, offset.
            var extra = offset + 46 + nameLength
            while extra + 4 <= offset + 46 + nameLength + extraLength {
                let (id, length) = (try integer(extra, 2), try integer(extra + 2, 2))
                if id == 1 {
                    var field = extra + 4
                    if try integer(offset + 24, 4) == 0xFFFF_FFFF { field += 8 }
                    if size == 0xFFFF_FFFF { size = try integer(field, 8); field += 8 }
                    if local == 0xFFFF_FFFF { local = try integer(field, 8) }
                }
                extra += 4 + length
            }
            guard method == 0 else {
                throw NumPyFile.FormatError("\(name) in the .npz is compressed (numpy.savez_compressed); save it with numpy.savez")
            }
            let start = local + 30 + (try integer(local + 26, 2)) + (try integer(local + 28, 2))
            guard start + size <= bytes.count else { throw NumPyFile.FormatError("\(name) runs past the end of the .npz") }
            do {
                let array = try NumPyFile.decode(Data(bytes[start..<(start + size)]))
                arrays.append((name.hasSuffix(".npy") ? String(name.dropLast(4)) : name, array.values, array.shape))
            } catch {
                throw NumPyFile.FormatError("\(name) in the .npz: \(error.description)")
            }
            offset += 46 + nameLength + extraLength + commentLength
        }
        return arrays
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
