import CPUBackend
import Executors
import Foundation
import GGUF
import Inference

/// Writes a copy of a GGUF model with its matrices converted to a `QuantizationScheme`, or kept in
/// their types, and LoRA adapters merged into the weights they adapt (`lumen quantize`, `lumen
/// export-lora`: llama.cpp's `llama-quantize` and `llama-export-lora`).
///
/// Every metadata entry (tokenizer included) is copied byte for byte, except, under a scheme,
/// `general.file_type` and `general.quantization_version`, which describe the new file. Tensors
/// keep their order and names; a tensor that already has its target type and no adapter is copied
/// unchanged, any other is widened to F32 row by row, gets the adapters' products added
/// (`MergedAdapterDelta`) and is quantized, rows split across threads. Merged into a weight of a
/// type Lumen reads but does not write, adapters leave it F16, as `llama-export-lora` leaves every
/// merged weight. The file is written under a
/// temporary name beside the destination, flushed, then renamed over it, so a reader never sees
/// a partial file and a failure leaves the destination as it was. The destination may be the
/// source file itself (same device and inode, whatever the path) only when the caller asks for
/// it. The source is read a slab at a time and its pages released once converted, so memory
/// stays bounded by the slab and not by the model.
public struct ModelQuantizer: Sendable {
    /// Reported after each tensor is written.
    public struct Progress: Sendable {
        /// How many tensors are done.
        public let completed: Int
        /// How many tensors there are.
        public let total: Int
        /// The tensor just written.
        public let tensor: String
        /// Its type in the new file.
        public let type: TensorType
    }

    /// What a finished quantization produced.
    public struct Summary: Sendable {
        /// The source file's size in bytes.
        public let inputBytes: Int
        /// The new file's size in bytes.
        public let outputBytes: Int
        /// How many tensors got each type, e.g. `[Q4_K: 19, Q6_K: 5, F32: 9]`.
        public let tensorTypes: [TensorType: Int]

        /// Input size over output size.
        public var ratio: Double { Double(inputBytes) / Double(max(1, outputBytes)) }

        /// The change in size in words: `3.52× smaller`, or `5.49× larger` when widening.
        public var sizeChange: String {
            ratio >= 1 ? String(format: "%.2f× smaller", ratio) : String(format: "%.2f× larger", 1 / ratio)
        }
    }

    /// The target format, or nil to keep each tensor's type.
    public let scheme: QuantizationScheme?
    /// The adapters merged into the weights they adapt.
    public let adapters: AdapterSet
    /// How many threads share each tensor's rows.
    public let threads: Int

    /// About how many source bytes are converted, written and evicted from memory at a time,
    /// which bounds the memory a quantization holds whatever the size of the model.
    public let slabBytes: Int

    /// A quantizer to `scheme` (nil: each tensor's own type) merging `adapters`, on `threads`
    /// threads, reading `slabBytes` of the source at a time.
    public init(scheme: QuantizationScheme?, adapters: AdapterSet = .none, threads: Int, slabBytes: Int = 16 << 20) {
        self.scheme = scheme
        self.adapters = adapters
        self.threads = max(1, threads)
        self.slabBytes = max(1, slabBytes)
    }

    /// The type each tensor of `model` would get, in file order.
    public func plan(for model: GGUFFile) throws(ModelError) -> [(tensor: GGUFFile.Tensor, type: TensorType)] {
        let architecture = model.metadata["general.architecture"]?.stringValue ?? "llama"
        let layers = model.metadata["\(architecture).block_count"]?.intValue
            ?? Set(model.tensors.compactMap { TensorName.blockWeight($0.name)?.layer }).count
        let tiedOutput = model.tensorsByName[TensorName.output.weight()] == nil
        let experts = model.metadata["\(architecture).expert_count"]?.intValue ?? 0
        let valueOrdinals = QuantizationScheme.valueOrdinals(model.tensors.map(\.name))
        try model.requireKnownTypes()
        return try model.tensors.map { tensor throws(ModelError) in
            guard tensor.type.isSupported else {
                throw ModelError(file: model.path, field: "tensor \(tensor.name)", reason: "tensor type \(tensor.type) cannot be read, so it cannot be converted")
            }
            guard let scheme else {
                return (tensor, adapters.adapts(tensor.name) && tensor.type.quantizer == nil ? .f16 : tensor.type)
            }
            return (tensor, scheme.type(forTensor: tensor.name, shape: tensor.shape, layers: layers, tiedOutput: tiedOutput,
                                        valueOrdinal: valueOrdinals[tensor.name], experts: experts))
        }
    }

    /// Writes `model` converted to the scheme at `path`, calling `progress` after each
    /// tensor; stops with `CancellationError` soon after `isCancelled` returns true. Refuses a
    /// destination that is `model`'s own file unless `replacingInput`, and one whose directory
    /// does not exist.
    public func quantize(_ model: GGUFFile, to path: String, replacingInput: Bool = false,
                         progress: (Progress) -> Void = { _ in },
                         isCancelled: @Sendable () -> Bool = { false }) throws -> Summary {
        // A symbolic link is written through, as `cp` would: its target gets the new model.
        let destination = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        if !replacingInput && FileIdentity.same(model.path, destination) {
            throw ModelError(file: path, field: "output", reason: "is the model being quantized (the same file); writing there would replace it")
        }
        if let directory = OutputPath.missingDirectory(of: path) {
            throw ModelError(file: path, field: "output", reason: "directory \(directory) does not exist")
        }
        let plan = try plan(for: model)
        let copied = model.metadataRecords.filter { scheme == nil || ($0.key != "general.file_type" && $0.key != "general.quantization_version") }
        let quantized = plan.contains { $0.type != .f32 && $0.type != .f16 }
        var header = GGUFWriter(tensorCount: plan.count, metadataCount: copied.count + (scheme == nil ? 0 : quantized ? 2 : 1))
        for record in copied {
            header.appendRecord(UnsafeRawBufferPointer(rebasing: model.mapping.bytes[record.bytes]))
        }
        if let scheme {
            header.appendMetadata("general.file_type", uint32: scheme.fileType)
            if quantized { header.appendMetadata("general.quantization_version", uint32: 2) }
        }
        var offset = 0
        var sizes: [Int] = []
        for (tensor, type) in plan {
            guard let size = type.byteCount(elements: tensor.elementCount) else {
                throw ModelError(file: model.path, field: "tensor \(tensor.name)", reason: "shape \(tensor.shape) is not a whole number of \(type) blocks")
            }
            header.appendTensor(name: tensor.name, shape: tensor.shape, type: type, offset: offset)
            sizes.append(size)
            offset += size + GGUFWriter.padding(size, model.alignment)
        }
        header.padToAlignment(model.alignment)

        let temporary = destination + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let file = FileHandle(forWritingAtPath: temporary) else {
            throw ModelError(file: destination, field: "output", reason: "cannot create \(temporary)")
        }
        var finished = false
        defer {
            try? file.close()
            if !finished { try? FileManager.default.removeItem(atPath: temporary) }
        }
        do {
            try file.write(contentsOf: header.bytes)
            let workers = WorkerPool(threads: threads)
            defer { workers.shutdown() }
            var counts: [TensorType: Int] = [:]
            for (index, (tensor, type)) in plan.enumerated() {
                try write(tensor, of: model, as: type, byteCount: sizes[index], to: file, workers: workers, isCancelled: isCancelled)
                try file.write(contentsOf: Data(count: GGUFWriter.padding(sizes[index], model.alignment)))
                counts[type, default: 0] += 1
                progress(Progress(completed: index + 1, total: plan.count, tensor: tensor.name, type: type))
            }
            try file.synchronize()
            try file.close()
            guard rename(temporary, destination) == 0 else {
                throw ModelError(file: destination, field: "output", reason: "cannot replace it: \(String(cString: strerror(errno)))")
            }
            finished = true
            return Summary(inputBytes: model.mapping.bytes.count, outputBytes: header.bytes.count + offset, tensorTypes: counts)
        } catch let error as ModelError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ModelError(file: destination, field: "output", reason: "writing failed: \(error.localizedDescription)")
        }
    }

    /// Writes `tensor` as `type` to `file`, a slab of rows at a time: each slab's rows are split
    /// across the threads, written, and its source pages evicted from memory.
    private func write(_ tensor: GGUFFile.Tensor, of model: GGUFFile, as type: TensorType, byteCount: Int, to file: FileHandle,
                       workers: WorkerPool, isCancelled: @Sendable () -> Bool) throws {
        let source = model.data(of: tensor)
        guard let sourceBase = source.baseAddress else { return }
        let columns = tensor.shape[0], rows = tensor.rowCount
        let sourceRowBytes = tensor.byteCount / rows, rowBytes = byteCount / rows
        let slabRows = max(1, slabBytes / max(1, sourceRowBytes))
        let delta = adapters.mergedDelta(for: tensor.name)
        let copied = tensor.type == type && delta == nil
        var output = Data(count: copied ? 0 : min(rows, slabRows) * rowBytes)
        for first in stride(from: 0, to: rows, by: slabRows) {
            if isCancelled() { throw CancellationError() }
            let count = min(slabRows, rows - first)
            let slabBase = sourceBase + first * sourceRowBytes
            let slab = UnsafeRawBufferPointer(start: slabBase, count: count * sourceRowBytes)
            if copied {
                try file.write(contentsOf: slab)
            } else {
                output.withUnsafeMutableBytes { buffer in
                    guard let outputBase = buffer.baseAddress else { return }
                    let parts = min(threads, count)
                    workers.run(parts: parts) { part in
                        let widened = UnsafeMutablePointer<Float>.allocate(capacity: columns)
                        defer { widened.deallocate() }
                        for row in (count * part / parts)..<(count * (part + 1) / parts) {
                            if row % 32 == 0 && isCancelled() { return }
                            Kernels.dequantize(tensor.type, slabBase + row * sourceRowBytes, into: widened, count: columns)
                            delta?.add(toRow: first + row, widened)
                            BlockQuantizer.quantize(type, widened, count: columns, into: outputBase + row * rowBytes)
                        }
                    }
                }
                if isCancelled() { throw CancellationError() }
                try file.write(contentsOf: output.prefix(count * rowBytes))
            }
            model.mapping.evict(slab)
        }
    }
}
