import CKernels
import Testing
@testable import Inference

/// Random quantized rows and the plain scalar arithmetic the fast kernels must agree with.
struct KernelFixture {
    var random = Xoshiro256(seed: 99)

    mutating func floats(_ count: Int, scale: Float = 1) -> [Float] {
        (0..<count).map { _ in Float(random.nextUnitDouble() * 2 - 1) * scale }
    }

    mutating func q8Row(blocks: Int, scale: Float16) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<blocks {
            withUnsafeBytes(of: scale.bitPattern.littleEndian) { bytes += $0 }
            bytes += (0..<32).map { _ in UInt8(bitPattern: Int8(Int(random.next() % 255) - 127)) }
        }
        return bytes
    }

    mutating func q4Row(blocks: Int, scale: Float16) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<blocks {
            withUnsafeBytes(of: scale.bitPattern.littleEndian) { bytes += $0 }
            bytes += (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        return bytes
    }

    /// Weights of a row, by the block layouts' definitions.
    static func referenceWeights(_ row: [UInt8], type: TensorType) -> [Double] {
        var weights: [Double] = []
        let blockBytes = type.layout.blockBytes
        for start in stride(from: 0, to: row.count, by: blockBytes) {
            let scale = Double(Float16(bitPattern: UInt16(row[start]) | UInt16(row[start + 1]) << 8))
            let body = row[(start + 2)..<(start + blockBytes)]
            if type == .q8_0 {
                weights += body.map { scale * Double(Int8(bitPattern: $0)) }
            } else {
                weights += body.map { scale * Double(Int($0 & 0x0F) - 8) } + body.map { scale * Double(Int($0 >> 4) - 8) }
            }
        }
        return weights
    }

    /// Q8_0 quantization of activations with round-to-nearest-even, as the AVX2 path rounds.
    static func referenceQuantize(_ x: [Float]) -> (values: [Int8], scales: [Float], sums: [Float]) {
        var values: [Int8] = []
        var scales: [Float] = []
        var sums: [Float] = []
        for start in stride(from: 0, to: x.count, by: 32) {
            let block = x[start..<(start + 32)]
            let scale = (block.map { abs($0) }.max() ?? 0) / 127
            scales.append(scale)
            let inverse: Float = scale != 0 ? 1 / scale : 0
            let quantized = block.map { Int8(($0 * inverse).rounded(.toNearestOrEven)) }
            values += quantized
            sums.append(scale * Float(quantized.reduce(0) { $0 + Int($1) }))
        }
        return (values, scales, sums)
    }
}

@Suite("Kernels against scalar references")
struct KernelTests {
    static let scales: [(String, Float16)] = [
        ("ordinary", 0.01), ("zero", 0), ("largest", .greatestFiniteMagnitude), ("subnormal", .leastNonzeroMagnitude),
    ]

    @Test("F32-activation dot products of Q8_0, Q4_0 and F16 rows", arguments: [TensorType.q8_0, .q4_0])
    func floatActivations(type: TensorType) {
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            for blocks in [1, 2, 5, 64] {
                let row = type == .q8_0 ? fixture.q8Row(blocks: blocks, scale: scale) : fixture.q4Row(blocks: blocks, scale: scale)
                let x = fixture.floats(blocks * 32)
                let expected = zip(KernelFixture.referenceWeights(row, type: type), x).reduce(0) { $0 + $1.0 * Double($1.1) }
                let fast = row.withUnsafeBytes { bytes in
                    type == .q8_0 ? lumen_dot_q8_0(bytes.baseAddress, x, x.count) : lumen_dot_q4_0(bytes.baseAddress, x, x.count)
                }
                let magnitude = zip(KernelFixture.referenceWeights(row, type: type), x).reduce(0) { $0 + abs($1.0 * Double($1.1)) }
                #expect(abs(Double(fast) - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(name) × \(blocks)")
            }
        }
    }

    @Test("F16 dot product, including lengths that are not a multiple of 16")
    func halfPrecision() {
        var fixture = KernelFixture()
        for count in [1, 15, 16, 33, 288] {
            let weights = fixture.floats(count).map { Float16($0) }
            let x = fixture.floats(count)
            let expected = zip(weights, x).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
            let fast = weights.withUnsafeBytes { lumen_dot_f16($0.baseAddress, x, count) }
            #expect(abs(Double(fast) - expected) < 1e-4, "count \(count)")
        }
    }

    @Test("activation quantization matches the scalar definition, zeros and extremes included")
    func quantization() {
        var fixture = KernelFixture()
        let inputs = [fixture.floats(256), [Float](repeating: 0, count: 64), fixture.floats(64, scale: 1e30), fixture.floats(32, scale: 1e-30)]
        for x in inputs {
            var values = [Int8](repeating: 0, count: x.count)
            var scales = [Float](repeating: 0, count: x.count / 32)
            var sums = [Float](repeating: 0, count: x.count / 32)
            lumen_quantize_q8(x, x.count, &values, &scales, &sums)
            let expected = KernelFixture.referenceQuantize(x)
            #expect(values == expected.values)
            #expect(scales == expected.scales)
            #expect(sums == expected.sums)
        }
    }

    @Test("integer dot products with 8-bit activations", arguments: [TensorType.q8_0, .q4_0])
    func quantizedActivations(type: TensorType) {
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            for blocks in [1, 3, 4, 7, 64] {
                let row = type == .q8_0 ? fixture.q8Row(blocks: blocks, scale: scale) : fixture.q4Row(blocks: blocks, scale: scale)
                let x = fixture.floats(blocks * 32)
                let (values, scales, sums) = KernelFixture.referenceQuantize(x)
                let weights = KernelFixture.referenceWeights(row, type: type)
                var expected = 0.0
                for (index, value) in values.enumerated() {
                    expected += weights[index] * Double(value) * Double(scales[index / 32])
                }
                let fast = row.withUnsafeBytes { bytes in
                    type == .q8_0 ? lumen_dot_q8_0_q8(bytes.baseAddress, values, scales, x.count)
                                  : lumen_dot_q4_0_q8(bytes.baseAddress, values, scales, sums, x.count)
                }
                if type == .q4_0 {
                    let portable = row.withUnsafeBytes { lumen_dot_q4_0_q8_avx2($0.baseAddress, values, scales, sums, x.count) }
                    #expect(abs(portable - fast) <= 1e-6 * Float(abs(expected)) + 1e-30, "AVX2 and dispatched Q4_0 kernels differ")
                }
                let magnitude = weights.enumerated().reduce(0) { $0 + abs($1.element * Double(values[$1.offset]) * Double(scales[$1.offset / 32])) }
                #expect(abs(Double(fast) - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(name) × \(blocks)")
            }
        }
    }

    @Test("BF16 dot product matches widening each weight")
    func brainFloat() {
        var fixture = KernelFixture()
        for count in [1, 16, 40, 288] {
            let bits = fixture.floats(count).map { UInt16($0.bitPattern >> 16) }
            let x = fixture.floats(count)
            let expected = zip(bits, x).reduce(0.0) { $0 + Double(Float(bitPattern: UInt32($1.0) << 16)) * Double($1.1) }
            let fast = bits.withUnsafeBytes { bytes in bytes.baseAddress.map { Kernels.dotBF16($0, x, count) } ?? .nan }
            #expect(abs(Double(fast) - expected) < 1e-4, "count \(count)")
        }
    }

    @Test("dequantization matches the block definitions", arguments: [TensorType.q8_0, .q4_0])
    func dequantization(type: TensorType) {
        var fixture = KernelFixture()
        let row = type == .q8_0 ? fixture.q8Row(blocks: 3, scale: 0.5) : fixture.q4Row(blocks: 3, scale: 0.5)
        var output = [Float](repeating: 0, count: 96)
        row.withUnsafeBytes { bytes in
            output.withUnsafeMutableBufferPointer { buffer in
                guard let source = bytes.baseAddress, let destination = buffer.baseAddress else { return }
                Kernels.dequantize(type, source, into: destination, count: 96)
            }
        }
        #expect(output.map(Double.init) == KernelFixture.referenceWeights(row, type: type))
    }
}
