import Foundation
import GGUF

/// A safetensors file (Hugging Face's format, in which SAELens and Gemma Scope ship SAEs): an
/// 8-byte little-endian header length, a JSON header giving each tensor's dtype, shape and byte
/// range, then the data. The file is mapped read-only; a tensor is converted to floats when it is
/// read, so the file is never copied whole into memory. Every header entry is checked against
/// the file when it is opened, so a truncated or inconsistent file is an error naming the tensor.
public final class SafetensorsFile {
    /// One tensor's place in the file.
    public struct Entry: Sendable {
        /// Its dtype as the header names it (`F32`, `F16`, `BF16`, …).
        public let dtype: String
        /// The length of each axis.
        public let shape: [Int]
        /// Its bytes, counted from the start of the data.
        let bytes: Range<Int>
    }

    /// The file's path.
    public let path: String
    /// The tensors, by name.
    public let entries: [String: Entry]
    /// The header's `__metadata__` (string to string), empty when it has none.
    public let metadata: [String: String]
    private let file: MappedFile
    private let dataStart: Int

    /// The longest header read (the safetensors library's own limit).
    static let maximumHeaderBytes = 100_000_000

    /// The dtypes read as floats: each one's bytes per element and its conversion.
    private static let floatReaders: [String: (size: Int, read: @Sendable (UnsafeRawBufferPointer, Int) -> Float)] = [
        "F32": (4, { Float(bitPattern: $0.loadUnaligned(fromByteOffset: $1, as: UInt32.self).littleEndian) }),
        "F16": (2, { Float(Float16(bitPattern: $0.loadUnaligned(fromByteOffset: $1, as: UInt16.self).littleEndian)) }),
        "BF16": (2, { Float(bitPattern: UInt32($0.loadUnaligned(fromByteOffset: $1, as: UInt16.self).littleEndian) << 16) }),
    ]
    /// Bytes per element of every dtype the format defines, to check any entry's byte range.
    private static let elementBytes: [String: Int] = [
        "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
        "F8_E4M3": 1, "F8_E5M2": 1,
    ]

    /// Maps the file at `path` and reads its header.
    ///
    /// - Throws: `ModelError` naming the file and the entry when the file cannot be read, its
    ///   header is not a safetensors header, or an entry's bytes do not fit its shape or the file.
    public init(path: String) throws(ModelError) {
        self.path = path
        file = try MappedFile(path: path)
        let bytes = file.bytes
        func failure(_ field: String, _ reason: String) -> ModelError { ModelError(file: path, field: field, reason: reason) }
        guard bytes.count >= 8 else { throw failure("header", "the file has \(bytes.count) bytes, fewer than a safetensors header's length field") }
        let headerLength = bytes.loadUnaligned(as: UInt64.self).littleEndian
        guard headerLength <= UInt64(min(Self.maximumHeaderBytes, bytes.count - 8)) else {
            throw failure("header", "the header claims \(headerLength) bytes; the file has \(bytes.count - 8) after the length field (and a header has at most \(Self.maximumHeaderBytes))")
        }
        dataStart = 8 + Int(headerLength)
        let headerData = Data(bytes[8..<dataStart])
        guard let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any] else {
            throw failure("header", "the header is not a JSON object")
        }
        let dataBytes = bytes.count - dataStart
        var entries: [String: Entry] = [:]
        var metadata: [String: String] = [:]
        for (name, value) in header {
            if name == "__metadata__" {
                metadata = (value as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
                continue
            }
            guard let fields = value as? [String: Any], let dtype = fields["dtype"] as? String, let shape = fields["shape"] as? [Int],
                  let offsets = fields["data_offsets"] as? [Int], offsets.count == 2 else {
                throw failure(name, "the header's entry needs dtype, shape and data_offsets [begin, end]")
            }
            guard let size = Self.elementBytes[dtype] else { throw failure(name, "unknown dtype \(dtype)") }
            var count = 1
            for length in shape {
                let (product, overflow) = count.multipliedReportingOverflow(by: length)
                guard length >= 0, !overflow else { throw failure(name, "the shape \(shape) has no size") }
                count = product
            }
            let (begin, end) = (offsets[0], offsets[1])
            guard begin >= 0, begin <= end, end <= dataBytes else {
                throw failure(name, "its bytes \(begin)..<\(end) are not within the file's \(dataBytes) bytes of data")
            }
            guard end - begin == count * size else {
                throw failure(name, "its \(end - begin) bytes do not hold \(count) elements of \(dtype) (shape \(shape))")
            }
            entries[name] = Entry(dtype: dtype, shape: shape, bytes: begin..<end)
        }
        self.entries = entries
        self.metadata = metadata
    }

    /// The tensor `name` as floats, C order, with its shape.
    ///
    /// - Throws: `ModelError` naming the tensor when the file has none of that name or its dtype
    ///   is not a floating-point one read here (F32, F16, BF16).
    public func floats(_ name: String) throws(ModelError) -> (values: [Float], shape: [Int]) {
        guard let entry = entries[name] else {
            throw ModelError(file: path, field: name, reason: "no tensor of that name; the file has \(entries.keys.sorted().joined(separator: ", "))")
        }
        guard let reader = Self.floatReaders[entry.dtype] else {
            throw ModelError(file: path, field: name, reason: "its dtype is \(entry.dtype); floats are read from F32, F16 or BF16")
        }
        let data = UnsafeRawBufferPointer(rebasing: file.bytes[(dataStart + entry.bytes.lowerBound)..<(dataStart + entry.bytes.upperBound)])
        let count = entry.bytes.count / reader.size
        let values = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count { buffer[index] = reader.read(data, index * reader.size) }
            initialized = count
        }
        return (values, entry.shape)
    }
}
