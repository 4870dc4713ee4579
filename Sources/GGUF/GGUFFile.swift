/// A parsed GGUF file (versions 2 and 3): metadata and tensor descriptions, with tensor data
/// left in the memory map. Everything is validated before use; a bad file gives a `ModelError`
/// naming the field and the problem.
public final class GGUFFile: Sendable {
    /// One tensor: its name, shape (innermost dimension first, as ggml orders them), type and bytes.
    public struct Tensor: Sendable {
        /// The tensor's name, e.g. `blk.0.attn_q.weight`.
        public let name: String
        /// The dimensions, innermost first (`shape[0]` is the length of a row).
        public let shape: [Int]
        /// The element type.
        public let type: TensorType
        /// Offset of the data from the start of the file.
        public let fileOffset: Int
        /// Size of the data in bytes.
        public let byteCount: Int

        /// The number of elements.
        public var elementCount: Int { shape.reduce(1, *) }
        /// The number of rows (all dimensions but the first).
        public var rowCount: Int { elementCount / shape[0] }
    }

    /// A tensor whose type id this version of Lumen does not know: described, never computed with.
    public struct UnknownTensor: Sendable {
        /// The tensor's name.
        public let name: String
        /// The dimensions, innermost first.
        public let shape: [Int]
        /// The type id the file gives.
        public let typeID: UInt32
    }

    /// Where one metadata entry (key, type and value) lies in the file, so a writer can copy it
    /// byte for byte with its original value type.
    public struct MetadataRecord: Sendable {
        /// The entry's key.
        public let key: String
        /// The entry's bytes in the file.
        public let bytes: Range<Int>
    }

    /// The mapped file.
    public let mapping: MappedFile
    /// The GGUF version (2 or 3).
    public let version: UInt32
    /// The metadata, by key.
    public let metadata: [String: MetadataValue]
    /// The metadata entries in file order.
    public let metadataRecords: [MetadataRecord]
    /// The tensors, in file order.
    public let tensors: [Tensor]
    /// The tensors, by name.
    public let tensorsByName: [String: Tensor]
    /// Tensors of type ids Lumen does not know (left out of `tensors`); a model or quantizer
    /// refuses such a file through `requireKnownTypes()`, while `lumen info` still describes it.
    public let unknownTensors: [UnknownTensor]
    /// The alignment of tensor data.
    public let alignment: Int

    private static let magic: UInt32 = 0x4655_4747  // "GGUF" read as a little-endian UInt32
    private static let maxDimensions = 4

    /// The file's path.
    public var path: String { mapping.path }

    /// Maps and parses the GGUF file at `path`.
    public convenience init(path: String) throws(ModelError) {
        try self.init(mapping: MappedFile(path: path))
    }

    /// Parses an already mapped file.
    public init(mapping: MappedFile) throws(ModelError) {
        self.mapping = mapping
        let file = mapping.path
        var reader = ByteReader(mapping.bytes, file: file)
        let magic = try reader.integer(UInt32.self, "magic")
        guard magic == Self.magic else {
            throw ModelError(file: file, field: "magic", reason: "not a GGUF file (the first four bytes are not \"GGUF\")")
        }
        version = try reader.integer(UInt32.self, "version")
        guard version == 2 || version == 3 else {
            throw ModelError(file: file, field: "version", reason: "GGUF version \(version) is not supported (2 and 3 are)")
        }
        let tensorCount = try reader.integer(UInt64.self, "tensor_count")
        let metadataCount = try reader.integer(UInt64.self, "metadata_kv_count")
        // Every entry takes at least 8 bytes (its name's length), which bounds honest counts.
        guard tensorCount <= UInt64(reader.remaining / 8), metadataCount <= UInt64(reader.remaining / 8) else {
            throw ModelError(file: file, field: "header", reason: "\(tensorCount) tensors and \(metadataCount) metadata entries cannot fit in a \(mapping.bytes.count)-byte file")
        }

        var metadata: [String: MetadataValue] = [:]
        var records: [MetadataRecord] = []
        for index in 0..<Int(metadataCount) {
            let start = reader.offset
            let key = try reader.string("metadata entry \(index) key")
            let type = try reader.integer(UInt32.self, "metadata \(key) type")
            metadata[key] = try Self.readValue(type: type, from: &reader, field: "metadata \(key)", depth: 0)
            records.append(MetadataRecord(key: key, bytes: start..<reader.offset))
        }
        self.metadata = metadata
        metadataRecords = records

        let alignment = metadata["general.alignment"]?.intValue ?? 32
        guard alignment > 0, alignment & (alignment - 1) == 0 else {
            throw ModelError(file: file, field: "general.alignment", reason: "\(alignment) is not a power of two")
        }
        self.alignment = alignment

        var descriptions: [(name: String, shape: [Int], type: TensorType, offset: Int)] = []
        var unknown: [UnknownTensor] = []
        for index in 0..<Int(tensorCount) {
            let name = try reader.string("tensor \(index) name")
            let dimensionCount = try reader.integer(UInt32.self, "tensor \(name) dimension count")
            guard (1...Self.maxDimensions).contains(Int(dimensionCount)) else {
                throw ModelError(file: file, field: "tensor \(name)", reason: "has \(dimensionCount) dimensions (1 to \(Self.maxDimensions) are allowed)")
            }
            var shape: [Int] = []
            for axis in 0..<Int(dimensionCount) {
                let size = try reader.integer(UInt64.self, "tensor \(name) dimension \(axis)")
                guard size > 0, size <= UInt64(Int32.max) else {
                    throw ModelError(file: file, field: "tensor \(name)", reason: "dimension \(axis) has size \(size)")
                }
                shape.append(Int(size))
            }
            let rawType = try reader.integer(UInt32.self, "tensor \(name) type")
            let offset = try reader.integer(UInt64.self, "tensor \(name) offset")
            guard offset <= UInt64(mapping.bytes.count) else {
                throw ModelError(file: file, field: "tensor \(name)", reason: "offset \(offset) is past the end of the file")
            }
            if let type = TensorType(rawValue: rawType) {
                descriptions.append((name, shape, type, Int(offset)))
            } else {
                unknown.append(UnknownTensor(name: name, shape: shape, typeID: rawType))
            }
        }
        unknownTensors = unknown

        let dataStart = (reader.offset + alignment - 1) / alignment * alignment
        var tensors: [Tensor] = []
        var byName: [String: Tensor] = [:]
        for description in descriptions {
            let (elements, overflow) = description.shape.reduce((1, false)) { partial, size in
                let product = partial.0.multipliedReportingOverflow(by: size)
                return (product.partialValue, partial.1 || product.overflow)
            }
            guard !overflow, let byteCount = description.type.byteCount(elements: elements),
                  description.shape[0] % description.type.layout.blockSize == 0 else {
                throw ModelError(file: file, field: "tensor \(description.name)",
                                 reason: "shape \(description.shape) is not a whole number of \(description.type) blocks of \(description.type.layout.blockSize)")
            }
            guard description.offset % alignment == 0 else {
                throw ModelError(file: file, field: "tensor \(description.name)", reason: "offset \(description.offset) is not aligned to \(alignment)")
            }
            let start = dataStart + description.offset
            guard start <= mapping.bytes.count, byteCount <= mapping.bytes.count - start else {
                throw ModelError(file: file, field: "tensor \(description.name)",
                                 reason: "data (\(byteCount) bytes at \(start)) runs past the end of the file (\(mapping.bytes.count) bytes)")
            }
            guard byName[description.name] == nil else {
                throw ModelError(file: file, field: "tensor \(description.name)", reason: "appears twice")
            }
            let tensor = Tensor(name: description.name, shape: description.shape, type: description.type, fileOffset: start, byteCount: byteCount)
            tensors.append(tensor)
            byName[tensor.name] = tensor
        }
        self.tensors = tensors
        self.tensorsByName = byName
    }

    private static func readValue(type: UInt32, from reader: inout ByteReader, field: String, depth: Int) throws(ModelError) -> MetadataValue {
        switch type {
        case 0: return .uint(UInt64(try reader.integer(UInt8.self, field)))
        case 1: return .int(Int64(try reader.integer(Int8.self, field)))
        case 2: return .uint(UInt64(try reader.integer(UInt16.self, field)))
        case 3: return .int(Int64(try reader.integer(Int16.self, field)))
        case 4: return .uint(UInt64(try reader.integer(UInt32.self, field)))
        case 5: return .int(Int64(try reader.integer(Int32.self, field)))
        case 6: return .float(Double(try reader.float32(field)))
        case 7:
            let byte = try reader.integer(UInt8.self, field)
            guard byte <= 1 else { throw ModelError(file: reader.file, field: field, reason: "boolean value \(byte) is neither 0 nor 1") }
            return .bool(byte == 1)
        case 8: return .string(try reader.string(field))
        case 9:
            guard depth == 0 else { throw ModelError(file: reader.file, field: field, reason: "arrays of arrays are not supported") }
            let elementType = try reader.integer(UInt32.self, field + " element type")
            let count = try reader.integer(UInt64.self, field + " length")
            guard count <= UInt64(reader.remaining) else {
                throw ModelError(file: reader.file, field: field, reason: "array length \(count) runs past the end of the file")
            }
            var elements: [MetadataValue] = []
            elements.reserveCapacity(Int(count))
            for _ in 0..<Int(count) {
                elements.append(try readValue(type: elementType, from: &reader, field: field, depth: depth + 1))
            }
            return .array(elements)
        case 10: return .uint(try reader.integer(UInt64.self, field))
        case 11: return .int(try reader.integer(Int64.self, field))
        case 12: return .float(try reader.float64(field))
        default:
            throw ModelError(file: reader.file, field: field, reason: "unknown value type \(type)")
        }
    }

    /// Throws, naming the first tensor and its type id, when the file has tensors of types Lumen
    /// does not know.
    public func requireKnownTypes() throws(ModelError) {
        guard let tensor = unknownTensors.first else { return }
        throw ModelError(file: path, field: "tensor \(tensor.name)",
                         reason: "tensor type \(tensor.typeID) is unknown to Lumen (a newer ggml type?)")
    }

    /// The bytes of `tensor`.
    public func data(of tensor: Tensor) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: mapping.bytes[tensor.fileOffset..<(tensor.fileOffset + tensor.byteCount)])
    }
}
