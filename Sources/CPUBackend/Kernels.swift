import CKernels
import GGUF

/// Dequantization through each type's kernels; the inner loops themselves are the C format
/// table's (`FormatKernels`), compiled for AVX2 and portably and chosen at load time. Each block layout is
/// llama.cpp's (`ggml-common.h`):
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
public enum Kernels {
    /// Writes `count` weights of `type` starting at `source` as floats (NaN for a type without a
    /// dequantization kernel; `Matrix` and the quantizer refuse such types before they get here).
    public static func dequantize(_ type: TensorType, _ source: UnsafeRawPointer, into output: UnsafeMutablePointer<Float>, count: Int) {
        guard let kernel = type.kernels?.dequantize else {
            output.update(repeating: .nan, count: count)
            return
        }
        kernel(source, output, count)
    }
}
