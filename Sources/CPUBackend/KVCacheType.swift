/// The element type of a session's KV cache: F32 (exact, the default, what the reference checks
/// use), F16 (llama.cpp's default: half the memory, and half the bytes attention reads at depth) or
/// Q8_0 (llama.cpp's `-ctk q8_0 -ctv q8_0`: 8.5 bits a value, heads a multiple of 32 wide).
public enum KVCacheType: String, Sendable, CaseIterable {
    case f32, f16, q8_0

    /// How the CPU stores and attends over a cache of the type.
    package var kernels: AttentionKernels {
        switch self {
        case .f32: .f32
        case .f16: .f16
        case .q8_0: .q8_0
        }
    }

    /// Values in one unit of the cache (a Q8_0 cache's blocks of 32; 1 otherwise): a head's width
    /// must be a multiple of it.
    public var valuesPerUnit: Int { kernels.unitValues }

    /// Bytes that `values` values take (a multiple of `valuesPerUnit`).
    package func bytes(values: Int) -> Int { values / kernels.unitValues * kernels.unitBytes }
}
