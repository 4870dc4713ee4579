/// Builds the header of a GGUF version 3 file: metadata entries and tensor descriptions. The
/// tensor data follows, each tensor starting at a multiple of `alignment` from the end of the
/// padded header (the offsets recorded in the descriptions).
public struct GGUFWriter {
    /// The header so far.
    public private(set) var bytes: [UInt8] = []
    private static let magic: UInt32 = 0x4655_4747
    /// GGUF's metadata value types.
    private static let uint32Type: UInt32 = 4, int32Type: UInt32 = 5, stringType: UInt32 = 8

    /// Starts a header announcing `tensorCount` tensors and `metadataCount` metadata entries.
    public init(tensorCount: Int, metadataCount: Int) {
        append(Self.magic)
        append(UInt32(3))
        append(UInt64(tensorCount))
        append(UInt64(metadataCount))
    }

    private mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private mutating func append(string: String) {
        append(UInt64(string.utf8.count))
        bytes += string.utf8
    }

    /// Appends a metadata entry exactly as another GGUF file encodes it (key, type and value).
    public mutating func appendRecord(_ encoded: UnsafeRawBufferPointer) {
        bytes += encoded
    }

    /// Appends a `uint32` metadata entry.
    public mutating func appendMetadata(_ key: String, uint32 value: UInt32) {
        append(string: key)
        append(Self.uint32Type)
        append(value)
    }

    /// Appends an `int32` metadata entry.
    public mutating func appendMetadata(_ key: String, int32 value: Int32) {
        append(string: key)
        append(Self.int32Type)
        append(value)
    }

    /// Appends a `string` metadata entry.
    public mutating func appendMetadata(_ key: String, string value: String) {
        append(string: key)
        append(Self.stringType)
        append(string: value)
    }

    /// Appends a tensor description whose data starts `offset` bytes into the data section.
    public mutating func appendTensor(name: String, shape: [Int], type: TensorType, offset: Int) {
        append(string: name)
        append(UInt32(shape.count))
        for size in shape { append(UInt64(size)) }
        append(type.rawValue)
        append(UInt64(offset))
    }

    /// Pads the header with zeros to a multiple of `alignment`, where the data section starts.
    public mutating func padToAlignment(_ alignment: Int) {
        bytes += [UInt8](repeating: 0, count: Self.padding(bytes.count, alignment))
    }

    /// The zeros that take `size` to a multiple of `alignment`.
    public static func padding(_ size: Int, _ alignment: Int) -> Int {
        (alignment - size % alignment) % alignment
    }
}
