import CKernels

/// The inner loops written with Swift SIMD types (F32 and BF16 dot products) and dequantization
/// through `TensorFormat.table`; what needs instructions Swift cannot express inline is in the
/// `CKernels` C target. Each block layout is llama.cpp's (`ggml-common.h`):
///
/// - Q8_0: 32 weights per 34-byte block: an F16 scale `d`, then 32 `Int8` values; w = d·q.
/// - Q4_0: 32 weights per 18-byte block: an F16 scale `d`, then 16 bytes whose low nibbles are
///   weights 0–15 and high nibbles weights 16–31; w = d·(q − 8).
/// - Q4_1: 32 weights per 20-byte block: F16 `d` and `m`, then Q4_0's nibbles; w = d·q + m.
/// - Q5_0: 32 weights per 22-byte block: `d`, a 32-bit word of fifth bits, then Q4_0's nibbles;
///   w = d·(q − 16).
/// - Q4_K: 256 weights per 144-byte block: F16 `d` and `dmin`, 12 bytes packing eight 6-bit
///   scales and mins, 128 bytes of nibbles; sub-block j of 32 has w = d·scale_j·q − dmin·min_j.
/// - Q5_K: Q4_K plus 32 bytes of fifth bits (176 bytes).
/// - Q6_K: 256 weights per 210-byte block: 128 bytes of low nibbles, 64 of high bit pairs, 16
///   int8 scales (one per 16 weights), then `d`; w = d·scale·(q − 32).
enum Kernels {
    typealias Vector = SIMD16<Float>

    @inline(__always)
    static func load(_ x: UnsafePointer<Float>, _ index: Int) -> Vector {
        UnsafeRawPointer(x + index).loadUnaligned(as: Vector.self)
    }

    @inline(__always)
    static func half(_ pointer: UnsafeRawPointer, _ byteOffset: Int = 0) -> Float {
        Float(Float16(bitPattern: pointer.loadUnaligned(fromByteOffset: byteOffset, as: UInt16.self)))
    }

    static func dotF32(_ row: UnsafeRawPointer, _ x: UnsafePointer<Float>, _ count: Int) -> Float {
        var first = Vector(), second = Vector()
        var index = 0
        while index + 32 <= count {
            first.addProduct(row.loadUnaligned(fromByteOffset: index * 4, as: Vector.self), load(x, index))
            second.addProduct(row.loadUnaligned(fromByteOffset: index * 4 + 64, as: Vector.self), load(x, index + 16))
            index += 32
        }
        if index + 16 <= count {
            first.addProduct(row.loadUnaligned(fromByteOffset: index * 4, as: Vector.self), load(x, index))
            index += 16
        }
        var sum = (first + second).sum()
        while index < count {
            sum += row.loadUnaligned(fromByteOffset: index * 4, as: Float.self) * x[index]
            index += 1
        }
        return sum
    }

    @inline(__always)
    static func bf16(_ bits: SIMD16<UInt16>) -> Vector {
        unsafeBitCast(SIMD16<UInt32>(truncatingIfNeeded: bits) &<< 16, to: Vector.self)
    }

    static func dotBF16(_ row: UnsafeRawPointer, _ x: UnsafePointer<Float>, _ count: Int) -> Float {
        var accumulator = Vector()
        var index = 0
        while index + 16 <= count {
            accumulator.addProduct(bf16(row.loadUnaligned(fromByteOffset: index * 2, as: SIMD16<UInt16>.self)), load(x, index))
            index += 16
        }
        var sum = accumulator.sum()
        while index < count {
            sum += Float(bitPattern: UInt32(row.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)) << 16) * x[index]
            index += 1
        }
        return sum
    }

    /// Writes `count` weights of `type` starting at `source` as floats (NaN for a type without a
    /// dequantization kernel; `Matrix` and the quantizer refuse such types before they get here).
    static func dequantize(_ type: TensorType, _ source: UnsafeRawPointer, into output: UnsafeMutablePointer<Float>, count: Int) {
        guard let kernel = type.format.dequantize else {
            output.update(repeating: .nan, count: count)
            return
        }
        kernel(source, output, count)
    }
}
