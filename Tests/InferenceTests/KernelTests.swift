import Foundation
import CKernels
@testable import GGUF
import Testing
@testable import Inference

/// Random quantized rows and the plain scalar arithmetic the fast kernels must agree with.
struct KernelFixture {
    var random = Xoshiro256(seed: 99)

    mutating func floats(_ count: Int, scale: Float = 1) -> [Float] {
        (0..<count).map { _ in Float(random.nextUnitDouble() * 2 - 1) * scale }
    }

    /// A row of `blocks` random blocks of `type` whose F16 scales (`d`, and `dmin` for Q4_K/Q5_K)
    /// are `scale` (MXFP4's power-of-two scale the power of two at or below it); every other byte
    /// is random.
    mutating func row(_ type: TensorType, blocks: Int, scale: Float16) -> [UInt8] {
        let blockBytes = type.layout.blockBytes
        var bytes = (0..<(blocks * blockBytes)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        if type == .mxfp4 {
            // The block's value is 2^(e − 128) · value[q].
            let exponent = scale == 0 ? 0 : UInt8(Int(Foundation.log2(Double(scale)).rounded(.down)) + 128)
            for block in 0..<blocks { bytes[block * blockBytes] = exponent }
            return bytes
        }
        let scaleOffsets: [Int] = switch type {
        case .q4_K, .q5_K, .q4_1, .q5_1: [0, 2]
        case .q6_K: [208]
        case .q2_K: [80, 82]
        case .q3_K: [108]
        default: [0]
        }
        for block in 0..<blocks {
            for offset in scaleOffsets {
                bytes[block * blockBytes + offset] = UInt8(scale.bitPattern & 0xFF)
                bytes[block * blockBytes + offset + 1] = UInt8(scale.bitPattern >> 8)
            }
        }
        return bytes
    }

    static func half(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> Double {
        let start = bytes.startIndex + offset
        return Double(Float16(bitPattern: UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8))
    }

    /// ggml's `kvalues_iq4nl`, the values IQ4 nibbles index.
    static let iq4Values: [Double] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]
    /// The FP4 (E2M1) numbers 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, as the MX
    /// specification defines them (bit 3 the sign, then two exponent bits and one mantissa bit).
    static let fp4Values: [Double] = (0..<16).map { code in
        let exponent = (code >> 1) & 3, mantissa = Double(code & 1)
        let magnitude = exponent == 0 ? mantissa * 0.5 : (1 + mantissa / 2) * Foundation.pow(2, Double(exponent - 1))
        return code & 8 == 0 ? magnitude : -magnitude
    }

    /// Scale and min `j` of a K-quant block's 12 packed bytes, by ggml's definition.
    static func scaleAndMin(_ j: Int, _ packed: ArraySlice<UInt8>) -> (scale: Double, min: Double) {
        let p = Array(packed)
        if j < 4 { return (Double(p[j] & 63), Double(p[j + 4] & 63)) }
        return (Double((p[j + 4] & 0x0F) | ((p[j - 4] >> 6) << 4)), Double((p[j + 4] >> 4) | ((p[j] >> 6) << 4)))
    }

    /// Weights of a row, by the block layouts' definitions (llama.cpp's `ggml-common.h`).
    static func referenceWeights(_ row: [UInt8], type: TensorType) -> [Double] {
        var weights: [Double] = []
        let blockBytes = type.layout.blockBytes
        for start in stride(from: 0, to: row.count, by: blockBytes) {
            let block = row[start..<(start + blockBytes)]
            weights += referenceBlock(Array(block)[...], type: type)
        }
        return weights
    }

    private static func referenceBlock(_ block: ArraySlice<UInt8>, type: TensorType) -> [Double] {
        let b = Array(block)
        switch type {
        case .q8_0:
            return b[2...].map { half(block, 0) * Double(Int8(bitPattern: $0)) }
        case .q4_0:
            return b[2...].map { half(block, 0) * Double(Int($0 & 0x0F) - 8) } + b[2...].map { half(block, 0) * Double(Int($0 >> 4) - 8) }
        case .q5_1:
            let (d, m) = (half(block, 0), half(block, 2))
            let high = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[4 + $1]) << (8 * $1) }
            return (0..<32).map { i in
                let nibble = i < 16 ? b[8 + i] & 0x0F : b[8 + i - 16] >> 4
                return d * Double(Int(nibble) | Int((high >> i) & 1) << 4) + m
            }
        case .q2_K:
            let (d, dmin) = (half(block, 80), half(block, 82))
            return (0..<256).map { i in
                // Weight i: half h of 128, shift group g (2 bits each), sub-block of 16.
                let h = i / 128, g = (i % 128) / 32, l = i % 32
                let scale = b[8 * h + 2 * g + l / 16]
                let q = (b[16 + 32 * h + l] >> (2 * g)) & 3
                return d * Double(scale & 0x0F) * Double(q) - dmin * Double(scale >> 4)
            }
        case .q3_K:
            let d = half(block, 108)
            let scales = (0..<16).map { j -> Int in
                let low = j < 8 ? Int(b[96 + j] & 0x0F) : Int(b[96 + j - 8] >> 4)
                return (low | Int((b[104 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32
            }
            return (0..<256).map { i in
                let h = i / 128, g = (i % 128) / 32, l = i % 32
                let q = Int((b[32 + 32 * h + l] >> (2 * g)) & 3)
                let highSet = (b[l] >> (4 * h + g)) & 1 == 1
                return d * Double(scales[8 * h + 2 * g + l / 16]) * Double(q - (highSet ? 0 : 4))
            }
        case .mxfp4:
            // An E8M0 scale: 2^(e − 127) times each FP4 number.
            let d = Foundation.pow(2, Double(Int(b[0]) - 127))
            return b[1...].map { d * Self.fp4Values[Int($0 & 0x0F)] } + b[1...].map { d * Self.fp4Values[Int($0 >> 4)] }
        case .iq4_nl:
            return b[2...].map { half(block, 0) * Self.iq4Values[Int($0 & 0x0F)] } + b[2...].map { half(block, 0) * Self.iq4Values[Int($0 >> 4)] }
        case .iq4_xs:
            let d = half(block, 0), high = Int(b[2]) | Int(b[3]) << 8
            return (0..<256).map { i in
                let sub = i / 32, j = i % 32
                let scale = (Int(b[4 + sub / 2] >> (4 * (sub % 2))) & 0x0F) | ((high >> (2 * sub)) & 3) << 4
                let byte = b[8 + 16 * sub + j % 16]
                return d * Double(scale - 32) * Self.iq4Values[Int(j < 16 ? byte & 0x0F : byte >> 4)]
            }
        case .q4_1:
            let (d, m) = (half(block, 0), half(block, 2))
            return b[4...].map { d * Double($0 & 0x0F) + m } + b[4...].map { d * Double($0 >> 4) + m }
        case .q5_0:
            let high = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[2 + $1]) << (8 * $1) }
            return (0..<32).map { i in
                let nibble = i < 16 ? b[6 + i] & 0x0F : b[6 + i - 16] >> 4
                return half(block, 0) * Double(Int(nibble) | Int((high >> i) & 1) << 4 - 16)
            }
        case .q4_K, .q5_K:
            let nibbles = type == .q4_K ? 16 : 48
            return (0..<256).map { i in
                let sub = i / 32, byte = b[nibbles + 32 * (sub / 2) + i % 32]
                let fifth = type == .q5_K ? Int((b[16 + i % 32] >> sub) & 1) << 4 : 0
                let (scale, min) = scaleAndMin(sub, block.dropFirst(4).prefix(12))
                let q = Double(Int(sub % 2 == 0 ? byte & 0x0F : byte >> 4) | fifth)
                return half(block, 0) * scale * q - half(block, 2) * min
            }
        case .q6_K:
            return (0..<256).map { i in
                let half128 = i / 128, group = (i % 128) / 32, l = i % 32
                let low = b[64 * half128 + l + (group % 2) * 32]
                let nibble = group < 2 ? low & 0x0F : low >> 4
                let pair = (b[128 + 32 * half128 + l] >> (2 * group)) & 3
                let scale = Double(Int8(bitPattern: b[192 + 8 * half128 + 2 * group + l / 16]))
                return half(block, 208) * scale * Double(Int(nibble | pair << 4) - 32)
            }
        default:
            return []
        }
    }

    /// The exact product of reference weights with quantized activations, and the sum of the
    /// terms' magnitudes (the scale of the rounding error allowed).
    static func referenceProduct(_ weights: [Double], _ quantized: (values: [Int8], scales: [Float], sums: [Float])) -> (value: Double, magnitude: Double) {
        var value = 0.0, magnitude = 0.0
        for (index, activation) in quantized.values.enumerated() {
            let term = weights[index] * Double(activation) * Double(quantized.scales[index / 32])
            value += term
            magnitude += abs(term)
        }
        return (value, magnitude)
    }

    /// Q8_0 quantization of activations with round-to-nearest-even, as the AVX2 path rounds;
    /// `sums` holds each block's scale × the sum of its values, then the same for each half block.
    static func referenceQuantize(_ x: [Float]) -> (values: [Int8], scales: [Float], sums: [Float]) {
        var values: [Int8] = []
        var scales: [Float] = []
        var sums: [Float] = []
        var halfSums: [Float] = []
        for start in stride(from: 0, to: x.count, by: 32) {
            let block = x[start..<(start + 32)]
            let scale = (block.map { abs($0) }.max() ?? 0) / 127
            scales.append(scale)
            let inverse: Float = scale != 0 ? 1 / scale : 0
            let quantized = block.map { Int8(($0 * inverse).rounded(.toNearestOrEven)) }
            values += quantized
            let first = quantized[..<16].reduce(0) { $0 + Int($1) }, second = quantized[16...].reduce(0) { $0 + Int($1) }
            sums.append(scale * Float(first + second))
            halfSums += [scale * Float(first), scale * Float(second)]
        }
        return (values, scales, sums + halfSums)
    }

    /// Tokens quantized one by one (`referenceQuantize`) in the chunked layout
    /// `lumen_quantize_q8_tokens` documents: chunks of eight tokens, the last padded with zeros;
    /// in each, group after group of 16 values with the eight tokens' side by side, then block
    /// scales, block sums and half-block sums likewise.
    static func chunked(_ tokens: [(values: [Int8], scales: [Float], sums: [Float])], k: Int) -> (values: [Int8], scales: [Float], sums: [Float]) {
        let chunk = 8, blocks = k / 32, padded = (tokens.count + chunk - 1) / chunk * chunk
        var values = [Int8](repeating: 0, count: padded * k)
        var scales = [Float](repeating: 0, count: padded * blocks), sums = [Float](repeating: 0, count: 3 * padded * blocks)
        for (token, quantized) in tokens.enumerated() {
            let base = token / chunk, slot = token % chunk
            for index in 0..<k {
                values[base * chunk * k + (index / 16) * 16 * chunk + slot * 16 + index % 16] = quantized.values[index]
            }
            for block in 0..<blocks { scales[base * chunk * blocks + block * chunk + slot] = quantized.scales[block] }
            for index in 0..<3 * blocks { sums[3 * base * chunk * blocks + index * chunk + slot] = quantized.sums[index] }
        }
        return (values, scales, sums)
    }
}

@Suite("Kernels against scalar references")
struct KernelTests {
    static let scales: [(String, Float16)] = [
        ("ordinary", 0.01), ("zero", 0), ("largest", .greatestFiniteMagnitude), ("subnormal", .leastNonzeroMagnitude),
    ]
    /// Every quantized format with kernels, from the format table.
    static let quantizedTypes: [TensorType] = TensorType.allCases.filter { $0.layout.blockSize > 1 && $0.isSupported }

    static func fastDot(_ type: TensorType, _ row: [UInt8], _ x: [Float]) -> Float {
        row.withUnsafeBytes { bytes in
            guard let dot = type.kernels?.dot, let pointer = bytes.baseAddress else { return .nan }
            return dot(pointer, x, x.count)
        }
    }

    /// The 8-bit-activation kernel for `type`; `withoutVNNI` picks the AVX2 kernel over the VNNI one.
    static func fastQuantizedDot(_ type: TensorType, _ row: [UInt8], _ q: (values: [Int8], scales: [Float], sums: [Float]), withoutVNNI: Int32) -> Float {
        row.withUnsafeBytes { bytes in
            guard let dot = type.kernels?.quantizedDot else { return .nan }
            return dot(bytes.baseAddress, q.values, q.scales, q.sums, q.values.count, withoutVNNI)
        }
    }

    @Test("the layout table describes every GGUF type, and the format tables agree with it")
    func formatTable() {
        for type in TensorType.allCases {
            #expect(type.hasLayout, "\(type) has no layout")
            #expect(type.layout.blockBytes > 0 && type.layout.blockSize > 0)
        }
        // Every row of the C format table names a GGUF type and has the two kernels every
        // computable format has, so no row is silently left out by a misspelt name.
        let names = FormatKernels.tableNames
        #expect(names.count == Set(names).count && names.count >= 15)
        for name in names {
            #expect(TensorType.allCases.contains { $0.description == name }, "C row \(name) names no GGUF type")
            #expect(FormatKernels.byName[name] != nil, "C row \(name) lacks a dequantization or dot kernel")
        }
    }

    static func blockCounts(_ type: TensorType) -> [Int] {
        type.layout.blockSize == 256 ? [1, 2, 3] : [1, 3, 4, 7, 64]
    }

    @Test("F32-activation dot products of every quantized format", arguments: quantizedTypes)
    func floatActivations(type: TensorType) {
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            for blocks in Self.blockCounts(type) {
                let row = fixture.row(type, blocks: blocks, scale: scale)
                let x = fixture.floats(blocks * type.layout.blockSize)
                let weights = KernelFixture.referenceWeights(row, type: type)
                let expected = zip(weights, x).reduce(0) { $0 + $1.0 * Double($1.1) }
                let magnitude = zip(weights, x).reduce(0) { $0 + abs($1.0 * Double($1.1)) }
                let fast = Self.fastDot(type, row, x)
                #expect(abs(Double(fast) - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(name) × \(blocks)")
            }
        }
    }

    @Test("an all-zero block gives zero weights and a zero product", arguments: quantizedTypes)
    func zeroBlocks(type: TensorType) {
        var fixture = KernelFixture()
        let row = [UInt8](repeating: 0, count: type.layout.blockBytes)
        let x = fixture.floats(type.layout.blockSize)
        #expect(KernelFixture.referenceWeights(row, type: type).allSatisfy { $0 == 0 })
        #expect(Self.fastDot(type, row, x) == 0)
        if type.hasQuantizedDot {
            #expect(Self.fastQuantizedDot(type, row, KernelFixture.referenceQuantize(x), withoutVNNI: 0) == 0)
        }
    }

    @Test("F16 dot product and widening, including lengths that are not a multiple of 16")
    func halfPrecision() throws {
        var fixture = KernelFixture()
        for count in [1, 15, 16, 33, 288] {
            let weights = fixture.floats(count).map { Float16($0) }
            let x = fixture.floats(count)
            let expected = zip(weights, x).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
            let kernels = try #require(TensorType.f16.kernels)
            let fast = weights.withUnsafeBytes { kernels.dot($0.baseAddress, x, count) }
            #expect(abs(Double(fast) - expected) < 1e-4, "count \(count)")
            var widened = [Float](repeating: .nan, count: count)
            weights.withUnsafeBytes { kernels.dequantize($0.baseAddress, &widened, count) }
            #expect(widened == weights.map { Float($0) }, "count \(count)")
        }
    }

    @Test("log Σ e^x of a vocabulary's logits matches the double-precision sum, with tails, -∞ entries and one value")
    func logSumExp() {
        var fixture = KernelFixture()
        var cases = [1, 7, 8, 9, 1003, 262_147].map { count in fixture.floats(count).map { $0 * 20 } }
        cases.append([-.infinity, 3, -.infinity, -2, 0.5, -.infinity, 7, 1, -.infinity])
        for logits in cases {
            let maximum = logits.max()!
            let expected = Double(maximum) + log(logits.reduce(0.0) { $0 + exp(Double($1) - Double(maximum)) })
            let fast = logits.withUnsafeBufferPointer { LogSoftmax.logNormalizer($0) }
            #expect(abs(Double(fast) - expected) < 2e-6 * max(1, abs(expected)), "count \(logits.count): \(fast) against \(expected)")
        }
        #expect([Float](repeating: -.infinity, count: 9).withUnsafeBufferPointer { LogSoftmax.logNormalizer($0) } == -.infinity)
    }

    @Test("activation quantization matches the scalar definition, zeros and extremes included")
    func quantization() {
        var fixture = KernelFixture()
        let inputs = [fixture.floats(256), [Float](repeating: 0, count: 64), fixture.floats(64, scale: 1e30), fixture.floats(32, scale: 1e-30)]
        for x in inputs {
            var values = [Int8](repeating: 0, count: x.count)
            var scales = [Float](repeating: 0, count: x.count / 32)
            var sums = [Float](repeating: 0, count: 3 * x.count / 32)
            lumen_quantize_q8(x, x.count, &values, &scales, &sums)
            let expected = KernelFixture.referenceQuantize(x)
            #expect(values == expected.values)
            #expect(scales == expected.scales)
            #expect(sums == expected.sums)
        }
    }

    @Test("a batch's activations are quantized token by token into chunks of eight, the last padded with zeros")
    func tokenChunks() {
        var fixture = KernelFixture()
        for (tokens, k) in [(1, 32), (8, 64), (11, 96), (17, 256)] {
            let inputs = (0..<tokens).map { _ in fixture.floats(k) }
            let expected = KernelFixture.chunked(inputs.map(KernelFixture.referenceQuantize), k: k)
            var values = [Int8](repeating: 1, count: expected.values.count)
            var scales = [Float](repeating: .nan, count: expected.scales.count), sums = [Float](repeating: .nan, count: expected.sums.count)
            lumen_quantize_q8_tokens(inputs.flatMap { $0 }, tokens, k, &values, &scales, &sums)
            #expect(values == expected.values, "\(tokens) tokens of \(k)")
            #expect(scales == expected.scales, "\(tokens) tokens of \(k)")
            #expect(sums == expected.sums, "\(tokens) tokens of \(k)")
        }
    }

    @Test("integer dot products with 8-bit activations, AVX2 and VNNI variants alike", arguments: quantizedTypes.filter(\.hasQuantizedDot))
    func quantizedActivations(type: TensorType) {
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            for blocks in Self.blockCounts(type) {
                let row = fixture.row(type, blocks: blocks, scale: scale)
                let x = fixture.floats(blocks * type.layout.blockSize)
                let quantized = KernelFixture.referenceQuantize(x)
                let (expected, magnitude) = KernelFixture.referenceProduct(KernelFixture.referenceWeights(row, type: type), quantized)
                let fast = Self.fastQuantizedDot(type, row, quantized, withoutVNNI: 0)
                let withoutVNNI = Self.fastQuantizedDot(type, row, quantized, withoutVNNI: 1)
                #expect(abs(Double(fast) - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(name) × \(blocks)")
                #expect(abs(Double(withoutVNNI) - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(name) × \(blocks), AVX2")
            }
        }
    }

    @Test("every format with an integer dot product has one for several rows and tokens, which gives each row and token bit for bit the one-token kernel's product, AVX2 and VNNI alike",
          arguments: quantizedTypes.filter(\.hasQuantizedDot))
    func quantizedActivationsForSeveralTokens(type: TensorType) throws {
        var fixture = KernelFixture()
        let many = try #require(type.kernels?.quantizedDotTokens, "\(type) has dot_q8 and no dot_q8_tokens")
        for (name, scale) in Self.scales {
            for blocks in Self.blockCounts(type) {
                let rows = (0..<3).map { _ in fixture.row(type, blocks: blocks, scale: scale) }
                for tokens in [1, 2, 3, 4, 5, 9] {
                    let quantized = (0..<tokens).map { _ in KernelFixture.referenceQuantize(fixture.floats(blocks * type.layout.blockSize)) }
                    let (values, scales, sums) = (quantized.flatMap(\.values), quantized.flatMap(\.scales), quantized.flatMap(\.sums))
                    for withoutVNNI: Int32 in [0, 1] {
                        // Four floats a token for three rows: the stride is honoured and the fourth left alone.
                        var output = [Float](repeating: .nan, count: 4 * tokens)
                        rows.flatMap { $0 }.withUnsafeBytes { bytes in
                            many(bytes.baseAddress, rows[0].count, rows.count, values, scales, sums, quantized[0].values.count, tokens, &output, 4, withoutVNNI)
                        }
                        for token in 0..<tokens {
                            for (index, row) in rows.enumerated() {
                                let alone = Self.fastQuantizedDot(type, row, quantized[token], withoutVNNI: withoutVNNI)
                                #expect(output[4 * token + index].bitPattern == alone.bitPattern,
                                        "\(type) \(name) × \(blocks), row \(index), token \(token) of \(tokens), without VNNI \(withoutVNNI)")
                            }
                            #expect(output[4 * token + 3].isNaN)
                        }
                    }
                }
            }
        }
    }

    @Test("Rows interleaved eight at a time (Q4_0, Q4_1, Q4_K): the eight-row product matches each row's reference, for several tokens bit for bit each token's, and the rows restore byte for byte")
    func interleavedRows() throws {
        let types = TensorType.allCases.filter { $0.kernels?.interleaving != nil }
        #expect(types == [.q4_0, .q4_1, .q4_K])
        #expect(types.filter { $0.kernels?.interleaving?.dotTokens != nil } == types)
        var fixture = KernelFixture()
        for type in types {
            let layout = try #require(type.kernels?.interleaving)
            for (name, scale) in Self.scales {
                for blocks in Self.blockCounts(type) {
                    for groups in [1, 3] {
                        let count = type.layout.blockSize * blocks
                        let rows = (0..<8 * groups).map { _ in fixture.row(type, blocks: blocks, scale: scale) }
                        let source = rows.flatMap { $0 }
                        let quantized = KernelFixture.referenceQuantize(fixture.floats(count))
                        var interleaved = [UInt8](repeating: 0, count: source.count)
                        lumen_interleave_rows(source, type.layout.blockBytes * blocks, groups, blocks, type.layout.blockBytes, layout.leadingHalves,
                                              &interleaved)
                        for withoutVNNI: Int32 in [0, 1] {
                            var products = [Float](repeating: .nan, count: 8 * groups)
                            layout.dot(interleaved, groups, quantized.values, quantized.scales, quantized.sums, count, &products, withoutVNNI)
                            for (index, row) in rows.enumerated() {
                                let (expected, magnitude) = KernelFixture.referenceProduct(KernelFixture.referenceWeights(row, type: type), quantized)
                                #expect(abs(Double(products[index]) - expected) <= 1e-5 * magnitude + 1e-30,
                                        "\(type) \(name) × \(blocks) blocks, row \(index) of \(8 * groups), without VNNI \(withoutVNNI)")
                            }
                            guard let many = layout.dotTokens else { continue }
                            for tokens in [2, 3, 4, 5, 9] {
                                let batch = (0..<tokens).map { _ in KernelFixture.referenceQuantize(fixture.floats(count)) }
                                // Rows of 8 · groups results, every other one: the stride is honoured.
                                var output = [Float](repeating: .nan, count: 2 * 8 * groups * tokens)
                                many(interleaved, groups, batch.flatMap(\.values), batch.flatMap(\.scales), batch.flatMap(\.sums), count, tokens,
                                     &output, 2 * 8 * groups, withoutVNNI)
                                for (token, quantized) in batch.enumerated() {
                                    var alone = [Float](repeating: .nan, count: 8 * groups)
                                    layout.dot(interleaved, groups, quantized.values, quantized.scales, quantized.sums, count, &alone, withoutVNNI)
                                    let together = Array(output[(2 * 8 * groups * token)..<(2 * 8 * groups * token + 8 * groups)])
                                    #expect(together.map(\.bitPattern) == alone.map(\.bitPattern),
                                            "\(type) \(name) × \(blocks) blocks, token \(token) of \(tokens), without VNNI \(withoutVNNI)")
                                }
                            }
                        }
                        var restored = [UInt8](repeating: 0, count: source.count)
                        lumen_restore_rows(interleaved, groups, blocks, type.layout.blockBytes, layout.leadingHalves, &restored)
                        #expect(restored == source, "\(type) \(name) × \(blocks) blocks, \(8 * groups) rows")
                    }
                }
            }
        }
    }

    @Test("F32 dot product, including lengths that are not a multiple of 8 or 32")
    func singlePrecision() {
        var fixture = KernelFixture()
        for count in [1, 7, 8, 31, 32, 33, 100, 288] {
            let weights = fixture.floats(count)
            let x = fixture.floats(count)
            let expected = zip(weights, x).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
            let fast = weights.withUnsafeBytes { lumen_dot_f32($0.baseAddress, x, count) }
            #expect(abs(Double(fast) - expected) < 1e-4, "count \(count)")
        }
    }

    @Test("the AVX2 kernels run exactly when the CPU has AVX2, FMA and F16C, the build is not portable and LUMEN_KERNELS does not ask for the portable ones")
    func kernelVariant() throws {
        let variant = String(cString: lumen_kernel_variant())
        #if os(Linux) && arch(x86_64)
        // The oracle is the operating system's list of the CPU's features, not the compiler's checks.
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? [])
        let capable = ["avx2", "fma", "f16c"].allSatisfy(flags.contains)
        let environment = ProcessInfo.processInfo.environment
        let portable = environment["LUMEN_PORTABLE"] == "1" || environment["LUMEN_KERNELS"] == "portable"
        #expect(variant == (capable && !portable ? "avx2" : "portable"))
        #else
        #expect(variant == "portable")
        #endif
    }

    @Test("BF16 dot product and widening match widening each weight")
    func brainFloat() throws {
        var fixture = KernelFixture()
        for count in [1, 16, 40, 288] {
            let bits = fixture.floats(count).map { UInt16($0.bitPattern >> 16) }
            let x = fixture.floats(count)
            let expected = zip(bits, x).reduce(0.0) { $0 + Double(Float(bitPattern: UInt32($1.0) << 16)) * Double($1.1) }
            let kernels = try #require(TensorType.bf16.kernels)
            let fast = bits.withUnsafeBytes { kernels.dot($0.baseAddress, x, count) }
            #expect(abs(Double(fast) - expected) < 1e-4, "count \(count)")
            var widened = [Float](repeating: .nan, count: count)
            bits.withUnsafeBytes { kernels.dequantize($0.baseAddress, &widened, count) }
            #expect(widened == bits.map { Float(bitPattern: UInt32($0) << 16) }, "count \(count)")
        }
    }

    @Test("dequantization matches the block definitions", arguments: quantizedTypes)
    func dequantization(type: TensorType) {
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            let row = fixture.row(type, blocks: 3, scale: scale)
            let count = 3 * type.layout.blockSize
            var output = [Float](repeating: 0, count: count)
            row.withUnsafeBytes { bytes in
                output.withUnsafeMutableBufferPointer { buffer in
                    guard let source = bytes.baseAddress, let destination = buffer.baseAddress else { return }
                    Kernels.dequantize(type, source, into: destination, count: count)
                }
            }
            let expected = KernelFixture.referenceWeights(row, type: type)
            let worst = zip(output, expected).map { abs(Double($0) - $1) / max(abs($1), 1e-30) }.max() ?? 0
            #expect(worst <= 1e-6, "\(type) \(name): relative error \(worst)")
        }
    }

    @Test("every quantized format decodes a row as levels, scales and mins that give the block definitions' weights", arguments: quantizedTypes)
    func levels(type: TensorType) throws {
        let decode = try #require(type.kernels?.levels, "\(type) has no levels decoder, so its prompt batches would widen to F32")
        var fixture = KernelFixture()
        for (name, scale) in Self.scales {
            let row = fixture.row(type, blocks: 3, scale: scale)
            let count = 3 * type.layout.blockSize
            var levels = [UInt8](repeating: 0, count: count)
            var scales = [Float](repeating: .nan, count: count / 16), mins = scales
            row.withUnsafeBytes { bytes in decode(bytes.baseAddress, &levels, &scales, &mins, count) }
            let expected = KernelFixture.referenceWeights(row, type: type)
            for index in 0..<count {
                let group = index / 16
                let got = Double(scales[group]) * Double(levels[index]) + Double(mins[group])
                let allowed = 1e-6 * (abs(Double(scales[group])) * 255 + abs(Double(mins[group]))) + 1e-30
                guard abs(got - expected[index]) <= allowed else {
                    Issue.record("\(type) \(name): weight \(index) is \(got), the definition gives \(expected[index])")
                    break
                }
            }
        }
    }

    @Test("the integer matrix–matrix product on levels matches the scalar definition, any format, rows, tokens and block count",
          arguments: quantizedTypes, [0, 1] as [Int32])
    func levelsMatrixProduct(type: TensorType, withoutVNNI: Int32) throws {
        let decode = try #require(type.kernels?.levels)
        var fixture = KernelFixture()
        let blockSize = type.layout.blockSize, blockBytes = type.layout.blockBytes
        for blocks in blockSize == 32 ? [2, 3, 8] : [1, 2] {
            for (rows, tokens) in [(1, 1), (7, 3), (8, 8), (9, 11), (17, 21)] {
                let k = blockSize * blocks
                let matrix = (0..<rows).map { _ in fixture.row(type, blocks: blocks, scale: 0.02) }
                let inputs = (0..<tokens).map { _ in fixture.floats(k) }
                let quantized = inputs.map(KernelFixture.referenceQuantize), chunks = KernelFixture.chunked(quantized, k: k)
                var output = [Float](repeating: .nan, count: tokens * rows)
                var workspace = [UInt8](repeating: 0, count: lumen_matmul_levels_workspace(k))
                lumen_matmul_levels_q8(decode, matrix.flatMap { $0 }, blockBytes * blocks, rows, chunks.values, chunks.scales, chunks.sums,
                                       tokens, k, &output, rows, &workspace, withoutVNNI)
                for token in 0..<tokens {
                    for row in 0..<rows {
                        let (expected, magnitude) = KernelFixture.referenceProduct(KernelFixture.referenceWeights(matrix[row], type: type), quantized[token])
                        let got = Double(output[token * rows + row])
                        #expect(abs(got - expected) <= 1e-5 * magnitude + 1e-30, "\(type) \(rows)×\(tokens)×\(blocks) at row \(row), token \(token): \(got) vs \(expected)")
                    }
                }
            }
        }
    }

    @Test("the F32 matrix–matrix product matches the definition: rows, tokens and lengths off the tile, token blocks")
    func floatMatrixProduct() {
        var fixture = KernelFixture()
        // k = 300 puts 216 tokens in a block, so 230 tokens take two blocks.
        for (rows, tokens, k) in [(1, 1, 8), (4, 5, 13), (7, 9, 64), (10, 230, 300)] {
            let rowStride = k + 3
            let weights = fixture.floats(rows * rowStride), inputs = fixture.floats(tokens * k)
            var output = [Float](repeating: .nan, count: tokens * rows)
            lumen_matmul_f32(weights, rowStride, rows, inputs, tokens, k, &output, rows)
            for token in 0..<tokens {
                for row in 0..<rows {
                    let expected = (0..<k).reduce(0.0) { $0 + Double(weights[row * rowStride + $1]) * Double(inputs[token * k + $1]) }
                    let magnitude = (0..<k).reduce(0.0) { $0 + abs(Double(weights[row * rowStride + $1]) * Double(inputs[token * k + $1])) }
                    #expect(abs(Double(output[token * rows + row]) - expected) <= 1e-6 * magnitude + 1e-30,
                            "\(rows)×\(tokens)×\(k) at row \(row), token \(token)")
                }
            }
        }
    }

    /// The softmax definition in doubles: one query's attention over positions `[first, length)`
    /// of cached keys and values laid out `[position][stride]`.
    static func referenceAttention(keys: [Float], values: [Float], stride: Int, query: ArraySlice<Float>, dim: Int,
                                   positions: Range<Int>, scale: Float, sink: Float = -.infinity) -> [Double] {
        let logits = positions.map { p in
            (0..<dim).reduce(0.0) { $0 + Double(keys[p * stride + $1]) * Double(query[query.startIndex + $1]) } * Double(scale)
        }
        let maximum = max(logits.max() ?? 0, Double(sink))
        let weights = logits.map { Foundation.exp($0 - maximum) }
        // An attention sink is one more score in the softmax, with no value.
        let total = weights.reduce(0, +) + Foundation.exp(Double(sink) - maximum)
        return (0..<dim).map { d in zip(positions, weights).reduce(0.0) { $0 + $1.1 * Double(values[$1.0 * stride + d]) } / total }
    }

    /// A cache of `cacheType` holding `floats`, and the values it reads back: F16 rounds each
    /// element once, when it is stored; Q8_0 as ggml's CPU `quantize_row_q8_0` (per 32 values
    /// d = max |x| / 127 as F16, q = x · 127 / max |x| rounded to nearest, ties to even), whose
    /// bytes the store must write exactly.
    static func cache(_ cacheType: KVCacheType, _ floats: [Float]) -> (bytes: [UInt8], cached: [Float]) {
        let kernels = cacheType.kernels
        var bytes = [UInt8](repeating: 0, count: cacheType.bytes(values: floats.count))
        bytes.withUnsafeMutableBytes { kernels.store(floats, $0.baseAddress, floats.count) }
        switch cacheType {
        case .f32: return (bytes, floats)
        case .f16: return (bytes, floats.map { Float(Float16($0)) })
        case .q8_0:
            var expected: [UInt8] = [], cached: [Float] = []
            for block in stride(from: 0, to: floats.count, by: 32).map({ floats[$0..<($0 + 32)] }) {
                let amax = block.map(abs).max() ?? 0, inverse: Float = amax != 0 ? 127 / amax : 0
                let d = Float16(amax / 127), levels = block.map { Int8(($0 * inverse).rounded(.toNearestOrEven)) }
                expected += withUnsafeBytes(of: d.bitPattern.littleEndian, Array.init) + levels.map { UInt8(bitPattern: $0) }
                cached += levels.map { Float(d) * Float($0) }
            }
            #expect(bytes == expected, "the Q8_0 store writes ggml's blocks")
            return (bytes, cached)
        }
    }

    /// Whether a kernel test's head width and stride fit `cacheType`'s units.
    static func fits(_ cacheType: KVCacheType, dim: Int, stride: Int) -> Bool {
        dim % cacheType.valuesPerUnit == 0 && stride % cacheType.valuesPerUnit == 0
    }

    @Test("attention over an F32, F16 or Q8_0 cache matches the softmax definition over what it holds, any head size its units fit and range",
          arguments: KVCacheType.allCases)
    func attention(cacheType: KVCacheType) {
        var fixture = KernelFixture()
        let kernels = cacheType.kernels
        let cases = [(64, 64, 0, 1), (64, 192, 0, 37), (72, 72, 5, 40), (96, 288, 0, 17), (256, 512, 3, 9), (5, 7, 0, 3)]
            .filter { Self.fits(cacheType, dim: $0.0, stride: $0.1) }
        // Without a sink, with a small one and with one that outweighs every position (gpt-oss's).
        for ((dim, stride, first, length), sink) in cases.flatMap({ c in [-Float.infinity, -0.5, 6].map { (c, $0) } }) {
            let (keys, values) = (Self.cache(cacheType, fixture.floats(length * stride, scale: 2)), Self.cache(cacheType, fixture.floats(length * stride)))
            let query = fixture.floats(dim)
            var scores = [Float](repeating: 0, count: length), output = [Float](repeating: .nan, count: dim)
            let scale: Float = 0.125
            keys.bytes.withUnsafeBytes { k in
                values.bytes.withUnsafeBytes { v in
                    _ = kernels.attend(k.baseAddress, v.baseAddress, stride / kernels.unitValues, query, dim, first, length, scale, sink, &scores, &output)
                }
            }
            let expected = Self.referenceAttention(keys: keys.cached, values: values.cached, stride: stride, query: query[...], dim: dim,
                                                   positions: first..<length, scale: scale, sink: sink)
            for d in 0..<dim {
                #expect(abs(Double(output[d]) - expected[d]) <= 1e-5, "\(cacheType) dim \(dim), positions \(first)..<\(length), sink \(sink), value \(d): \(output[d]) vs \(expected[d])")
            }
        }
    }

    @Test("four consecutive queries at once match the softmax definition, each over its own causal range", arguments: KVCacheType.allCases)
    func attentionFourQueries(cacheType: KVCacheType) {
        var fixture = KernelFixture()
        let kernels = cacheType.kernels
        let cases = [(8, 8, 1), (48, 48, 2), (64, 192, 37), (72, 72, 9), (256, 256, 20), (32, 96, 5)].filter { Self.fits(cacheType, dim: $0.0, stride: $0.1) }
        for ((dim, stride, length), sink) in cases.flatMap({ c in [-Float.infinity, 1].map { (c, $0) } }) {
            let positions = length + 3
            let (keys, values) = (Self.cache(cacheType, fixture.floats(positions * stride, scale: 2)), Self.cache(cacheType, fixture.floats(positions * stride)))
            // The queries of four tokens, one row apart, and their outputs likewise (rows of `queryStride`).
            let queryStride = dim + 24, scoresStride = positions + 5
            let queries = fixture.floats(4 * queryStride)
            var scores = [Float](repeating: .nan, count: 4 * scoresStride), output = [Float](repeating: .nan, count: 4 * queryStride)
            let scale: Float = 0.2
            keys.bytes.withUnsafeBytes { k in
                values.bytes.withUnsafeBytes { v in
                    kernels.attendFour(k.baseAddress, v.baseAddress, stride / kernels.unitValues, queries, queryStride, dim, length, scale, sink,
                                       &scores, scoresStride, &output, queryStride)
                }
            }
            for j in 0..<4 {
                let expected = Self.referenceAttention(keys: keys.cached, values: values.cached, stride: stride,
                                                       query: queries[(j * queryStride)..<(j * queryStride + dim)], dim: dim,
                                                       positions: 0..<(length + j), scale: scale, sink: sink)
                for d in 0..<dim {
                    let value = output[j * queryStride + d]
                    #expect(abs(Double(value) - expected[d]) <= 1e-5, "\(cacheType) dim \(dim), query \(j) of length \(length + j), value \(d): \(value) vs \(expected[d])")
                }
                #expect(output[(j * queryStride + dim)..<((j + 1) * queryStride)].allSatisfy { $0.isNaN }, "writes past the head's values")
            }
        }
    }
}
