/// How activations meet quantized weights in matrix–vector products.
public enum ActivationPrecision: Sendable, Equatable {
    /// Activations stay F32 and weights are widened to F32: exact, slower. The reference for
    /// checking dequantization kernels.
    case float32
    /// Activations are quantized to 8 bits (Q8_0 blocks) once per product and meet quantized
    /// weights in integer dot products, as llama.cpp does: fast, with rounding of the same size
    /// as llama.cpp's.
    case quantized
}
