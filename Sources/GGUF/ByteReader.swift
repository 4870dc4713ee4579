/// Reads little-endian values from a byte buffer, checking every read against its end, so a
/// truncated or hostile file gives an error instead of an out-of-bounds read.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let file: String
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, file: String, offset: Int = 0) {
        self.bytes = bytes
        self.file = file
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    private mutating func take(_ count: Int, for field: @autoclosure () -> String) throws(ModelError) -> Int {
        guard count >= 0, count <= remaining else {
            throw ModelError(file: file, field: field(), reason: "the file ends at byte \(bytes.count) but \(count) more bytes are needed at byte \(offset)")
        }
        defer { offset += count }
        return offset
    }

    mutating func integer<T: FixedWidthInteger>(_ type: T.Type, _ field: @autoclosure () -> String) throws(ModelError) -> T {
        let start = try take(MemoryLayout<T>.size, for: field())
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: T.self))
    }

    mutating func float32(_ field: @autoclosure () -> String) throws(ModelError) -> Float {
        Float(bitPattern: try integer(UInt32.self, field()))
    }

    mutating func float64(_ field: @autoclosure () -> String) throws(ModelError) -> Double {
        Double(bitPattern: try integer(UInt64.self, field()))
    }

    mutating func string(_ field: @autoclosure () -> String) throws(ModelError) -> String {
        let length = try integer(UInt64.self, field())
        guard length <= UInt64(remaining) else {
            throw ModelError(file: file, field: field(), reason: "string length \(length) runs past the end of the file")
        }
        let start = try take(Int(length), for: field())
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]), as: UTF8.self)
    }
}
