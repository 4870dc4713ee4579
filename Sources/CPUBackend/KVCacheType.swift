/// The element type of a session's KV cache: F32 (exact, the default, what the reference checks
/// use) or F16 (llama.cpp's default: half the memory, and half the bytes attention reads at depth).
public enum KVCacheType: String, Sendable, CaseIterable {
    case f32, f16

    /// How the CPU stores and attends over a cache of the type.
    package var kernels: AttentionKernels {
        switch self {
        case .f32: .f32
        case .f16: .f16
        }
    }

    /// Bytes of one element.
    package var bytesPerElement: Int { kernels.bytesPerElement }
}
