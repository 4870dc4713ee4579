import Foundation
import GGUF
import Testing
@testable import Inference
@testable import Quantization

/// Weights of tensor `name` of `file` as floats.
func weights(_ file: GGUFFile, _ name: String) throws -> [Float] {
    let tensor = try #require(file.tensorsByName[name])
    var output = [Float](repeating: 0, count: tensor.elementCount)
    let rowBytes = tensor.byteCount / tensor.rowCount
    output.withUnsafeMutableBufferPointer { buffer in
        guard let source = file.data(of: tensor).baseAddress, let destination = buffer.baseAddress else { return }
        for row in 0..<tensor.rowCount {
            Kernels.dequantize(tensor.type, source + row * rowBytes, into: destination + row * tensor.shape[0], count: tensor.shape[0])
        }
    }
    return output
}

func rootMeanSquare(_ values: [Float]) -> Double {
    (values.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, values.count))).squareRoot()
}

/// A temporary directory removed when the value is released.
final class ScratchDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-tests-\(UUID().uuidString)").path

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite("Quantization")
struct QuantizerTests {
    /// Quantizes `x` to `type` and widens it back.
    static func roundTrip(_ x: [Float], _ type: TensorType) throws -> [Float] {
        let bytes = try #require(type.byteCount(elements: x.count))
        var encoded = [UInt8](repeating: 0, count: bytes)
        var decoded = [Float](repeating: 0, count: x.count)
        encoded.withUnsafeMutableBytes { raw in
            guard let destination = raw.baseAddress else { return }
            x.withUnsafeBufferPointer { source in
                guard let base = source.baseAddress else { return }
                BlockQuantizer.quantize(type, base, count: x.count, into: destination)
            }
            decoded.withUnsafeMutableBufferPointer { output in
                guard let base = output.baseAddress else { return }
                Kernels.dequantize(type, destination, into: base, count: x.count)
            }
        }
        return decoded
    }

    /// Relative round-trip error each format should stay under on Gaussian-like weights.
    static let bounds: [(TensorType, Double)] = [
        (.f16, 1e-3), (.q8_0, 0.01), (.q6_K, 0.03), (.q5_K, 0.05), (.q5_0, 0.06), (.q4_K, 0.1), (.q4_1, 0.1), (.q5_1, 0.06), (.q4_0, 0.12),
        (.q3_K, 0.2), (.q2_K, 0.4), (.mxfp4, 0.2),
    ]

    @Test("every type Lumen writes it can read, and each fallback is another type it reads")
    func writtenTypes() {
        #expect(Set(TypeQuantizer.table.keys) == Set(Self.bounds.map(\.0) + [.f32]))
        for (type, quantizer) in TypeQuantizer.table {
            #expect(type.isSupported, "\(type) is written but cannot be read")
            if let fallback = quantizer.fallback { #expect(fallback.isSupported && fallback != type, "\(type)") }
        }
    }

    @Test("each format round-trips random rows within its precision", arguments: bounds)
    func roundTripError(type: TensorType, bound: Double) throws {
        var fixture = KernelFixture()
        let x = (0..<1024).map { _ in fixture.floats(4).reduce(0, +) }
        let error = zip(try Self.roundTrip(x, type), x).map { $0 - $1 }
        #expect(rootMeanSquare(error) / rootMeanSquare(x) < bound, "\(type)")
    }

    @Test("zero rows stay zero and a lone outlier keeps its value", arguments: [TensorType.q8_0, .q4_0, .q4_1, .q5_0, .q5_1, .q2_K, .q3_K, .q4_K, .q5_K, .q6_K])
    func edgeCases(type: TensorType) throws {
        #expect(try Self.roundTrip([Float](repeating: 0, count: 256), type).allSatisfy { $0 == 0 })
        var spike = [Float](repeating: 0, count: 256)
        spike[77] = -3.5
        let decoded = try Self.roundTrip(spike, type)
        #expect(abs(decoded[77] + 3.5) < 0.01, "\(type): \(decoded[77])")
        #expect(decoded.enumerated().allSatisfy { $0.offset == 77 || abs($0.element) < 0.01 })
    }

    /// The default slab holds whole tensors of the test model; 1000 bytes is less than one row,
    /// so every row is a slab of its own.
    @Test("Q8_0 and Q4_0 reproduce llama.cpp's quantized tensors byte for byte, read whole or a row at a time",
          arguments: [("Q8_0", "q8_0"), ("Q4_0", "q4_0")], [16 << 20, 1000])
    func identicalToLlamaCpp(format: (name: String, reference: String), slabBytes: Int) throws {
        let (name, reference) = format
        let scratch = try ScratchDirectory()
        let scheme = try #require(QuantizationScheme(name: name))
        let source = try GGUFFile(path: try TestData.path("models/quant-test-f32.gguf"))
        let output = scratch.path + "/out.gguf"
        _ = try ModelQuantizer(scheme: scheme, threads: 2, slabBytes: slabBytes).quantize(source, to: output)
        let ours = try GGUFFile(path: output)
        let theirs = try GGUFFile(path: try TestData.path("models/quant-test-\(reference).gguf"))
        for tensor in theirs.tensors {
            let mine = try #require(ours.tensorsByName[tensor.name])
            #expect(mine.type == tensor.type && mine.shape == tensor.shape, "\(tensor.name)")
            #expect(Array(ours.data(of: mine)) == Array(theirs.data(of: tensor)), "\(tensor.name)")
        }
    }

    @Test("K-quant error on real tensors is within 3% of llama.cpp's quantizer", arguments: [(TensorType.q4_K, "q4_k"), (.q6_K, "q6_k")])
    func kQuantQuality(type: TensorType, reference: String) throws {
        let source = try GGUFFile(path: try TestData.path("models/quant-test-f32.gguf"))
        let theirs = try GGUFFile(path: try TestData.path("models/quant-test-\(reference).gguf"))
        for name in ["blk.0.attn_q.weight", "blk.1.ffn_down.weight"] {
            let original = try weights(source, name)
            let ourError = zip(try Self.roundTrip(original, type), original).map { $0 - $1 }
            let theirError = zip(try weights(theirs, name), original).map { $0 - $1 }
            #expect(rootMeanSquare(ourError) <= 1.03 * rootMeanSquare(theirError), "\(name)")
        }
    }

    /// `Tests/reference/quantization.json` (scripts/make_quantization_references.py): llama.cpp's
    /// Q2_K, Q3_K_M and Q5_K_S quantizations of quant-test-f32, tensor by tensor.
    static func llamaCppQuantizations() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("reference/quantization.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try #require(root["schemes"] as? [String: Any])
    }

    @Test("Q2_K and Q3_K error on every tensor llama.cpp gave that type is within 3% of llama.cpp's",
          arguments: [(TensorType.q2_K, "Q2_K"), (.q3_K, "Q3_K_M")])
    func lowBitQuality(type: TensorType, scheme: String) throws {
        let source = try GGUFFile(path: try TestData.path("models/quant-test-f32.gguf"))
        let reference = try #require(try Self.llamaCppQuantizations()[scheme] as? [String: Any])
        let tensors = try #require(reference["tensors"] as? [String: [String: Any]])
        var compared = 0
        for (name, entry) in tensors.sorted(by: { $0.key < $1.key }) where entry["type"] as? String == type.description {
            let theirs = try #require(entry["rms_error"] as? Double)
            let original = try weights(source, name)
            let ours = rootMeanSquare(zip(try Self.roundTrip(original, type), original).map { $0 - $1 })
            #expect(ours <= 1.03 * theirs, "\(name): \(ours) against llama.cpp's \(theirs)")
            compared += 1
        }
        #expect(compared >= 8)
    }

    @Test("Q3_K_M and Q5_K_S give each tensor llama.cpp's type, and the file its size", arguments: ["Q3_K_M", "Q5_K_S"])
    func lowBitMixesMatchLlamaCpp(name: String) throws {
        let scratch = try ScratchDirectory()
        let reference = try #require(try Self.llamaCppQuantizations()[name] as? [String: Any])
        let tensors = try #require(reference["tensors"] as? [String: [String: Any]])
        let source = try GGUFFile(path: try TestData.path("models/quant-test-f32.gguf"))
        let scheme = try #require(QuantizationScheme(name: name))
        let output = scratch.path + "/out.gguf"
        _ = try ModelQuantizer(scheme: scheme, threads: 2).quantize(source, to: output)
        let ours = try GGUFFile(path: output)
        #expect(ours.tensors.count == tensors.count)
        for tensor in ours.tensors {
            #expect(tensors[tensor.name]?["type"] as? String == tensor.type.description, "\(tensor.name) → \(tensor.type)")
        }
        #expect(ours.mapping.bytes.count == reference["file_bytes"] as? Int)
    }

    @Test("Q4_K_M gives each tensor the type llama.cpp gave it")
    func mixMatchesLlamaCpp() throws {
        let reference = try GGUFFile(path: try TestData.path("models/quant-test-q4_k_m.gguf"))
        let source = try GGUFFile(path: try TestData.path("models/quant-test-f32.gguf"))
        let plan = try ModelQuantizer(scheme: .q4_K_M, threads: 1).plan(for: source)
        for (tensor, type) in plan {
            #expect(reference.tensorsByName[tensor.name]?.type == type, "\(tensor.name) → \(type)")
        }
    }

    @Test("rows that are not a whole number of blocks fall back to a format that fits")
    func fallbackTypes() {
        #expect(QuantizationScheme.q4_K_M.type(forTensor: "blk.0.attn_q.weight", shape: [288, 288], layers: 6) == .q5_0)
        #expect(QuantizationScheme.q5_K_M.type(forTensor: "blk.0.attn_q.weight", shape: [288, 288], layers: 6) == .q5_1)
        #expect(QuantizationScheme.q4_0.type(forTensor: "blk.0.ffn_down.weight", shape: [172, 64], layers: 6) == .f16)
        #expect(QuantizationScheme.q4_K_M.type(forTensor: "blk.0.attn_norm.weight", shape: [288], layers: 6) == .f32)
        #expect(QuantizationScheme.q4_K_M.type(forTensor: "token_embd.weight", shape: [768, 32000], layers: 12, tiedOutput: true) == .q6_K)
        #expect(QuantizationScheme.q4_K_M.type(forTensor: "token_embd.weight", shape: [768, 32000], layers: 12) == .q4_K)
        #expect(QuantizationScheme.usesMoreBits(layer: 0, of: 22) && QuantizationScheme.usesMoreBits(layer: 21, of: 22))
        #expect(!QuantizationScheme.usesMoreBits(layer: 3, of: 22) && QuantizationScheme.usesMoreBits(layer: 4, of: 22))
    }

    @Test("a quantized model keeps its metadata and tokenizer, loads, and generates like its source")
    func quantizedModelLoads() async throws {
        let scratch = try ScratchDirectory()
        let source = try GGUFFile(path: try TestData.path("models/stories260K.gguf"))
        let output = scratch.path + "/q.gguf"
        var reported: [Int] = []
        let summary = try ModelQuantizer(scheme: .q8_0, threads: 2).quantize(source, to: output) { reported.append($0.completed) }
        #expect(reported == Array(1...source.tensors.count))
        let quantized = try GGUFFile(path: output)
        #expect(summary.outputBytes == quantized.mapping.bytes.count && summary.ratio > 3)
        for (key, value) in source.metadata where key != "general.file_type" {
            #expect(quantized.metadata[key] == value, "\(key)")
        }
        #expect(quantized.metadata["general.file_type"] == .uint(7))
        let original = try await collect(ModelSession(model: LanguageModel(gguf: source), threads: 1).generate("Once upon a time", options: greedy(12)))
        let copy = try await collect(ModelSession(model: LanguageModel(gguf: quantized), threads: 1).generate("Once upon a time", options: greedy(12)))
        #expect(copy.ids.prefix(4) == original.ids.prefix(4))
    }

    @Test("a cancelled quantization leaves the destination untouched and no temporary file")
    func cancellationIsAtomic() throws {
        let scratch = try ScratchDirectory()
        let destination = scratch.path + "/existing.gguf"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: destination))
        let source = try GGUFFile(path: try TestData.path("models/stories260K.gguf"))
        #expect(throws: CancellationError.self) {
            try ModelQuantizer(scheme: .q4_0, threads: 2).quantize(source, to: destination, isCancelled: { true })
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("keep me".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["existing.gguf"])
    }

    /// A GGUF file with one `type` tensor of `shape` whose data is zeros.
    static func singleTensorFile(_ path: String, type: TensorType, shape: [Int]) throws {
        var writer = GGUFWriter(tensorCount: 1, metadataCount: 0)
        writer.appendTensor(name: "blk.0.attn_q.weight", shape: shape, type: type, offset: 0)
        writer.padToAlignment(32)
        let dataBytes = shape.reduce(1, *) / type.layout.blockSize * type.layout.blockBytes + type.layout.blockBytes
        try Data(writer.bytes + [UInt8](repeating: 0, count: dataBytes)).write(to: URL(fileURLWithPath: path))
    }

    @Test("a K-quant tensor whose rows are not a whole number of blocks is refused, naming it")
    func partialBlocks() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/bad.gguf"
        try Self.singleTensorFile(path, type: .q4_K, shape: [100, 4])
        #expect {
            _ = try GGUFFile(path: path)
        } throws: { error in
            "\(error)".contains("blk.0.attn_q.weight") && "\(error)".contains("whole number of Q4_K blocks of 256")
        }
    }

    @Test("a tensor type Lumen cannot compute with is refused, naming the type and tensor")
    func unsupportedType() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path + "/q8k.gguf"
        try Self.singleTensorFile(path, type: .q8_K, shape: [256, 4])
        let file = try GGUFFile(path: path)
        #expect {
            _ = try Matrix(try #require(file.tensors.first), in: file, interleaving: true)
        } throws: { error in
            "\(error)".contains("Q8_K") && "\(error)".contains("blk.0.attn_q.weight")
        }
    }
}
