import CKernels

/// How a KV cache of one element type stores keys and values and attends over them: the C
/// attention kernels for F32 and for F16 caches, one row of the table per type.
package struct AttentionKernels: Sendable {
    /// How many queries `attendFour` takes at once.
    package static let queriesAtOnce = 4
    /// An F32 cache's: exact.
    package static let f32 = AttentionKernels(bytesPerElement: 4, store: lumen_store_f32, attend: lumen_attend_f32, attendFour: lumen_attend4_f32)
    /// An F16 cache's: half the memory, and half the bytes attention reads at depth.
    package static let f16 = AttentionKernels(bytesPerElement: 2, store: lumen_store_f16, attend: lumen_attend_f16, attendFour: lumen_attend4_f16)

    package let bytesPerElement: Int
    /// Writes a head's floats into the cache at a position (`lumen_store_f32`).
    package let store: @convention(c) (UnsafePointer<Float>?, UnsafeMutableRawPointer?, Int) -> Void
    /// One query head over a range of positions, with an attention sink or −∞ (`lumen_attend_f32`).
    package let attend: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                        UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) -> Float
    /// `queriesAtOnce` consecutive tokens' queries of one head (`lumen_attend4_f32`).
    package let attendFour: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                            UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<Float>?, Int) -> Void
}
