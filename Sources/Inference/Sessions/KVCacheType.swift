import CKernels

/// The element type of a session's KV cache: F32 (exact, the default, what the reference checks
/// use) or F16 (llama.cpp's default: half the memory, and half the bytes attention reads at depth).
public enum KVCacheType: String, Sendable, CaseIterable {
    case f32, f16

    /// How the cache stores and attends: one row of the table per type.
    struct Kernels {
        /// How many queries `attendFour` takes at once.
        static let queriesAtOnce = 4
        let bytesPerElement: Int
        let store: @convention(c) (UnsafePointer<Float>?, UnsafeMutableRawPointer?, Int) -> Void
        /// One query head over a range of positions, with an attention sink or −∞ (`lumen_attend_f32`).
        let attend: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                    UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) -> Float
        /// `queriesAtOnce` consecutive tokens' queries of one head (`lumen_attend4_f32`).
        let attendFour: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                        UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<Float>?, Int) -> Void
    }

    var kernels: Kernels {
        switch self {
        case .f32: Kernels(bytesPerElement: 4, store: lumen_store_f32, attend: lumen_attend_f32, attendFour: lumen_attend4_f32)
        case .f16: Kernels(bytesPerElement: 2, store: lumen_store_f16, attend: lumen_attend_f16, attendFour: lumen_attend4_f16)
        }
    }
}
