import CPUBackend
import Foundation
import GGUF

/// Quantizes rows of floats into ggml's block formats (the layouts `Kernels` documents).
///
/// The simple formats round to a scale taken from each block's largest magnitude. The K-quants
/// fit each sub-block by weighted least squares over a few candidate scales, weighting each
/// value by how large it is, then quantize the sub-block scales (and mins) themselves to 6 or 8
/// bits and requantize with the rounded scales, so that the stored values match what will be
/// decoded.
enum BlockQuantizer {
    /// Quantizes one block of floats into its bytes.
    typealias QuantizeBlock = @Sendable (UnsafeBufferPointer<Float>, UnsafeMutableRawPointer) -> Void

    /// Writes `count` floats from `row` (a whole number of `type` blocks) as `type` to `output`,
    /// through the type's quantizer (`TypeQuantizer.table`); returns false when the type has none.
    @discardableResult
    static func quantize(_ type: TensorType, _ row: UnsafePointer<Float>, count: Int, into output: UnsafeMutableRawPointer) -> Bool {
        guard let quantizeRow = type.quantizer?.quantizeRow else { return false }
        quantizeRow(row, count, output)
        return true
    }

    /// A row quantizer of `type` that applies `quantizeBlock` to each of its blocks (their size and
    /// bytes from the type's layout).
    static func rows(of type: TensorType, _ quantizeBlock: @escaping QuantizeBlock) -> TypeQuantizer.QuantizeRow {
        let (blockSize, blockBytes) = type.layout
        return { row, count, output in
            for block in 0..<(count / blockSize) {
                quantizeBlock(UnsafeBufferPointer(start: row + block * blockSize, count: blockSize), output + block * blockBytes)
            }
        }
    }

    /// Q4_1 as llama.cpp's `quantize_row_q4_1_ref`: the block's minimum as `m`, its range over 15
    /// levels as `d`, each value rounded half up.
    static func q4_1(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let levels = affineLevels(x, steps: 15, destination)
        for index in 0..<16 {
            destination.storeBytes(of: UInt8(levels[index] | levels[index + 16] << 4), toByteOffset: 4 + index, as: UInt8.self)
        }
    }

    /// Q5_1 as llama.cpp's `quantize_row_q5_1_ref`: Q4_1 with 31 levels, the fifth bits apart.
    static func q5_1(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let levels = affineLevels(x, steps: 31, destination)
        var fifthBits: UInt32 = 0
        for index in 0..<16 {
            let low = levels[index], high = levels[index + 16]
            destination.storeBytes(of: UInt8(low & 0x0F | (high & 0x0F) << 4), toByteOffset: 8 + index, as: UInt8.self)
            fifthBits |= UInt32(low >> 4) << index | UInt32(high >> 4) << (index + 16)
        }
        destination.storeBytes(of: fifthBits.littleEndian, toByteOffset: 4, as: UInt32.self)
    }

    /// The affine formats' header and levels: stores `d` = range / `steps` and `m` = minimum as
    /// F16, and returns each value's level, rounded half up (with the unrounded `d`, as ggml).
    private static func affineLevels(_ x: UnsafeBufferPointer<Float>, steps: Int, _ destination: UnsafeMutableRawPointer) -> [Int] {
        let minimum = x.min() ?? 0, maximum = x.max() ?? 0
        let scale = (maximum - minimum) / Float(steps)
        let inverse: Float = scale == 0 ? 0 : 1 / scale
        storeHalf(scale, destination, 0)
        storeHalf(minimum, destination, 2)
        return x.map { min(steps, Int(($0 - minimum) * inverse + 0.5)) }
    }

    private static func storeHalf(_ value: Float, _ destination: UnsafeMutableRawPointer, _ offset: Int) {
        destination.storeBytes(of: Float16(value).bitPattern, toByteOffset: offset, as: UInt16.self)
    }

    static func q8_0(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let maxMagnitude = x.reduce(0) { max($0, abs($1)) }
        let scale = maxMagnitude / 127
        let inverse: Float = scale == 0 ? 0 : 1 / scale
        storeHalf(scale, destination, 0)
        for (index, value) in x.enumerated() {
            destination.storeBytes(of: Int8((value * inverse).rounded()), toByteOffset: 2 + index, as: Int8.self)
        }
    }

    /// MXFP4's doubled FP4 values (ggml's `kvalues_mxfp4`), in nibble order.
    private static let mxfp4Values: [Float] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]

    /// MXFP4 as llama.cpp's `quantize_row_mxfp4_ref`: the exponent `e` = ⌊log₂ max |x|⌋ − 2 + 127
    /// (so the block's largest magnitude is 4 to 8 FP4 units of 2^(e − 127), and values beyond
    /// FP4's largest, 6, clip as in ggml), and each value the nearest of the sixteen doubled FP4
    /// values times 2^(e − 128) (the first in table order on a tie).
    static func mxfp4(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let maxMagnitude = x.reduce(0) { max($0, abs($1)) }
        let exponent = maxMagnitude > 0 ? min(255, max(0, Int(Foundation.log2(maxMagnitude).rounded(.down)) - 2 + 127)) : 0
        // 2^(e − 128), subnormal for e < 2 (as ggml's `GGML_E8M0_TO_FP32_HALF`).
        let d = Float(sign: .plus, exponent: exponent - 128, significand: 1)
        func nearest(_ value: Float) -> UInt8 {
            var best = 0
            for index in 1..<16 where abs(mxfp4Values[index] * d - value) < abs(mxfp4Values[best] * d - value) { best = index }
            return UInt8(best)
        }
        destination.storeBytes(of: UInt8(exponent), as: UInt8.self)
        for index in 0..<16 {
            destination.storeBytes(of: nearest(x[index]) | nearest(x[index + 16]) << 4, toByteOffset: 1 + index, as: UInt8.self)
        }
    }

    /// Q4_0 (`levels` 16) or Q5_0 (32): the value of largest magnitude maps to level 0, so its sign
    /// picks the direction of the scale, and zero sits at level `levels / 2`.
    static func symmetric(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer, levels: Int) {
        let extreme = x.reduce(Float(0)) { abs($1) > abs($0) ? $1 : $0 }
        let scale = extreme / -Float(levels / 2)
        let inverse: Float = scale == 0 ? 0 : 1 / scale
        storeHalf(scale, destination, 0)
        let quantized = x.map { min(levels - 1, max(0, Int(($0 * inverse + Float(levels / 2)).rounded()))) }
        let nibbleOffset = levels == 16 ? 2 : 6
        var fifthBits: UInt32 = 0
        for index in 0..<16 {
            let low = quantized[index], high = quantized[index + 16]
            destination.storeBytes(of: UInt8(low & 0x0F) | UInt8(high & 0x0F) << 4, toByteOffset: nibbleOffset + index, as: UInt8.self)
            fifthBits |= UInt32(low >> 4) << index | UInt32(high >> 4) << (index + 16)
        }
        if levels == 32 { destination.storeBytes(of: fifthBits.littleEndian, toByteOffset: 2, as: UInt32.self) }
    }

    /// The best `value ≈ scale · q + offset` for one sub-block, `q` in `0...levels` and
    /// `offset ≤ 0`, by weighted least squares over a range of candidate scales (in C: the
    /// quantizer's inner loop).
    private static func fitAffine(_ x: ArraySlice<Float>, _ weights: ArraySlice<Float>, levels: Int) -> (scale: Float, offset: Float) {
        x.withUnsafeBufferPointer { values in
            weights.withUnsafeBufferPointer { ScaleFitting.affine(values, weights: $0, levels: levels) }
        }
    }

    /// Q4_K (`levels` 15) or Q5_K (31): eight sub-blocks of 32 with 6-bit scales and mins.
    static func kQuant(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer, levels: Int) {
        let values = Array(x)
        let spread = (values.reduce(0) { $0 + $1 * $1 } / 256).squareRoot()
        let weights = values.map { spread + abs($0) }
        var scales = [Float](repeating: 0, count: 8), mins = [Float](repeating: 0, count: 8)
        for sub in 0..<8 {
            let range = (32 * sub)..<(32 * sub + 32)
            let fit = fitAffine(values[range], weights[range], levels: levels)
            scales[sub] = fit.scale
            mins[sub] = -fit.offset
        }
        let maxScale = scales.max() ?? 0, maxMin = mins.max() ?? 0
        let d = Float(Float16(maxScale / 63)), dmin = Float(Float16(maxMin / 63))
        let scaleLevels = scales.map { d > 0 ? min(63, Int(($0 / d).rounded())) : 0 }
        let minLevels = mins.map { dmin > 0 ? min(63, Int(($0 / dmin).rounded())) : 0 }
        storeHalf(d, destination, 0)
        storeHalf(dmin, destination, 2)
        var packed = [UInt8](repeating: 0, count: 12)
        for sub in 0..<8 {
            let scale = UInt8(scaleLevels[sub]), minimum = UInt8(minLevels[sub])
            if sub < 4 {
                packed[sub] |= scale
                packed[sub + 4] |= minimum
            } else {
                packed[sub + 4] = (scale & 0x0F) | (minimum & 0x0F) << 4
                packed[sub - 4] |= (scale >> 4) << 6
                packed[sub] |= (minimum >> 4) << 6
            }
        }
        for (index, byte) in packed.enumerated() { destination.storeBytes(of: byte, toByteOffset: 4 + index, as: UInt8.self) }
        let quantized = values.enumerated().map { index, value -> Int in
            let scale = d * Float(scaleLevels[index / 32]), offset = dmin * Float(minLevels[index / 32])
            return scale > 0 ? min(levels, max(0, Int(((value + offset) / scale).rounded()))) : 0
        }
        let nibbleOffset = levels == 15 ? 16 : 48
        for pair in 0..<4 {
            for l in 0..<32 {
                let low = quantized[64 * pair + l], high = quantized[64 * pair + 32 + l]
                destination.storeBytes(of: UInt8(low & 0x0F) | UInt8(high & 0x0F) << 4, toByteOffset: nibbleOffset + 32 * pair + l, as: UInt8.self)
                if levels == 31 {
                    let fifth = destination.load(fromByteOffset: 16 + l, as: UInt8.self) & ~(3 << (2 * pair))
                    destination.storeBytes(of: fifth | UInt8(low >> 4) << (2 * pair) | UInt8(high >> 4) << (2 * pair + 1), toByteOffset: 16 + l, as: UInt8.self)
                }
            }
        }
    }

    /// The best `value ≈ scale · q` for one 16-value sub-block, `q` in `-maxLevel..<maxLevel`,
    /// weighting each value by its square (in C: the quantizer's inner loop).
    private static func fitSymmetric(_ x: ArraySlice<Float>, maxLevel: Int) -> Float {
        x.withUnsafeBufferPointer { ScaleFitting.symmetric($0, maxLevel: maxLevel) }
    }

    /// Q3_K's and Q6_K's shared fit of a 256-value block: each sub-block of 16 as `scale · q`
    /// (`fitSymmetric`), the sixteen scales stored as signed multiples of one F16 `d` in
    /// `-maxScaleLevel..<maxScaleLevel`, then every value requantized with its rounded scale.
    /// Returns `d`, the scale levels and each value's `q + maxLevel` (in `0..<2 · maxLevel`).
    private static func symmetricSubBlocks(_ x: UnsafeBufferPointer<Float>, maxLevel: Int,
                                           maxScaleLevel: Int) -> (d: Float, scaleLevels: [Int], levels: [Int]) {
        let values = Array(x)
        let scales = (0..<16).map { fitSymmetric(values[(16 * $0)..<(16 * $0 + 16)], maxLevel: maxLevel) }
        let extreme = scales.reduce(Float(0)) { abs($1) > abs($0) ? $1 : $0 }
        let inverse: Float = extreme == 0 ? 0 : -Float(maxScaleLevel) / extreme
        let d = Float(Float16(extreme == 0 ? 0 : 1 / inverse))
        let scaleLevels = scales.map { min(maxScaleLevel - 1, max(-maxScaleLevel, Int(($0 * inverse).rounded()))) }
        let levels = values.enumerated().map { index, value -> Int in
            let scale = d * Float(scaleLevels[index / 16])
            return (scale != 0 ? min(maxLevel - 1, max(-maxLevel, Int((value / scale).rounded()))) : 0) + maxLevel
        }
        return (d, scaleLevels, levels)
    }

    /// Q6_K: sixteen sub-blocks of 16 with int8 scales.
    static func q6_K(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let (d, scaleLevels, quantized) = symmetricSubBlocks(x, maxLevel: 32, maxScaleLevel: 128)
        for (index, level) in scaleLevels.enumerated() { destination.storeBytes(of: Int8(level), toByteOffset: 192 + index, as: Int8.self) }
        storeHalf(d, destination, 208)
        for half in 0..<2 {
            for l in 0..<32 {
                let q = (0..<4).map { quantized[128 * half + 32 * $0 + l] }
                destination.storeBytes(of: UInt8(q[0] & 0x0F) | UInt8(q[2] & 0x0F) << 4, toByteOffset: 64 * half + l, as: UInt8.self)
                destination.storeBytes(of: UInt8(q[1] & 0x0F) | UInt8(q[3] & 0x0F) << 4, toByteOffset: 64 * half + 32 + l, as: UInt8.self)
                let high = UInt8(q[0] >> 4) | UInt8(q[1] >> 4) << 2 | UInt8(q[2] >> 4) << 4 | UInt8(q[3] >> 4) << 6
                destination.storeBytes(of: high, toByteOffset: 128 + 32 * half + l, as: UInt8.self)
            }
        }
    }
    /// Q2_K: sixteen sub-blocks of 16 fitted as `scale · q − min` with `q` in `0...3`, weighting
    /// each value by its magnitude; scales and mins stored as 4-bit multiples of `d` and `dmin`.
    static func q2_K(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let values = Array(x), weights = values.map { abs($0) }
        let fits = (0..<16).map { sub in
            let range = (16 * sub)..<(16 * sub + 16)
            return fitAffine(values[range], weights[range], levels: 3)
        }
        let maxScale = fits.map(\.scale).max() ?? 0, maxMin = fits.map { -$0.offset }.max() ?? 0
        let d = Float(Float16(maxScale / 15)), dmin = Float(Float16(maxMin / 15))
        let scaleLevels = fits.map { d > 0 ? min(15, Int(($0.scale / d).rounded())) : 0 }
        let minLevels = fits.map { dmin > 0 ? min(15, Int((-$0.offset / dmin).rounded())) : 0 }
        for sub in 0..<16 {
            destination.storeBytes(of: UInt8(scaleLevels[sub] | minLevels[sub] << 4), toByteOffset: sub, as: UInt8.self)
        }
        storeHalf(d, destination, 80)
        storeHalf(dmin, destination, 82)
        let levels = values.enumerated().map { index, value -> Int in
            let scale = d * Float(scaleLevels[index / 16]), offset = dmin * Float(minLevels[index / 16])
            return scale > 0 ? min(3, max(0, Int(((value + offset) / scale).rounded()))) : 0
        }
        storeTwoBitLevels(levels, destination, offset: 16)
    }

    /// Q3_K: sixteen sub-blocks of 16 fitted as `scale · q` with `q` in `-4...3`, weighting each
    /// value by its square; scales stored as signed 6-bit multiples of `d`, `q + 4` as two low
    /// bits and a high bit in a separate mask.
    static func q3_K(_ x: UnsafeBufferPointer<Float>, _ destination: UnsafeMutableRawPointer) {
        let (d, scaleLevels, levels) = symmetricSubBlocks(x, maxLevel: 4, maxScaleLevel: 32)
        var packed = [UInt8](repeating: 0, count: 12)
        for (j, level) in scaleLevels.enumerated() {
            let stored = UInt8(level + 32)
            if j < 8 { packed[j] |= stored & 0x0F } else { packed[j - 8] |= (stored & 0x0F) << 4 }
            packed[8 + j % 4] |= (stored >> 4) << (2 * (j / 4))
        }
        for (index, byte) in packed.enumerated() { destination.storeBytes(of: byte, toByteOffset: 96 + index, as: UInt8.self) }
        storeHalf(d, destination, 108)
        for byte in 0..<32 {
            let mask = (0..<8).reduce(UInt8(0)) { $0 | (levels[32 * $1 + byte] > 3 ? 1 << $1 : 0) }
            destination.storeBytes(of: mask, toByteOffset: byte, as: UInt8.self)
        }
        storeTwoBitLevels(levels.map { $0 & 3 }, destination, offset: 32)
    }

    /// The low two bits of 256 levels as Q2_K and Q3_K store them: byte `32h + l` of the 64 at
    /// `offset` holds levels `128h + l`, `+ 32`, `+ 64` and `+ 96` at shifts 0, 2, 4 and 6.
    private static func storeTwoBitLevels(_ levels: [Int], _ destination: UnsafeMutableRawPointer, offset: Int) {
        for half in 0..<2 {
            for l in 0..<32 {
                let byte = (0..<4).reduce(0) { $0 | (levels[128 * half + 32 * $1 + l] & 3) << (2 * $1) }
                destination.storeBytes(of: UInt8(byte), toByteOffset: offset + 32 * half + l, as: UInt8.self)
            }
        }
    }
}
