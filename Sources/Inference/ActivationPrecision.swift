/// How activations meet quantized weights in matrix–vector products.
public enum ActivationPrecision: Sendable, Equatable {
    /// Activations stay F32 and weights are widened to F32: exact, slower. The reference for
    /// checking dequantization kernels.
    case float32
    /// Activations are quantized to 8 bits once per product and meet quantized weights in
    /// integer dot products, rounded exactly as llama.cpp rounds them for the weight format
    /// (Q8_0, Q8_1 or Q8_K; see `TensorFormat.activations`): fast, and llama.cpp's arithmetic.
    case quantized
}
