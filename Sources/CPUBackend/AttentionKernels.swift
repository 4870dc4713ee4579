import CKernels

/// How a KV cache of one element type stores keys and values and attends over them: the C
/// attention kernels for F32, F16 and Q8_0 caches, one row of the table per type.
package struct AttentionKernels: Sendable {
    /// How many queries `attendFour` takes at once.
    package static let queriesAtOnce = 4
    /// An F32 cache's: exact.
    package static let f32 = AttentionKernels(unitValues: 1, unitBytes: 4, store: lumen_store_f32, attend: lumen_attend_f32, attendFour: lumen_attend4_f32)
    /// An F16 cache's: half the memory, and half the bytes attention reads at depth.
    package static let f16 = AttentionKernels(unitValues: 1, unitBytes: 2, store: lumen_store_f16, attend: lumen_attend_f16, attendFour: lumen_attend4_f16)
    /// A Q8_0 cache's (ggml's blocks of 32 bytes and an F16 scale): 8.5 bits a value.
    package static let q8_0 = AttentionKernels(unitValues: 32, unitBytes: 34, store: lumen_store_q8_0, attend: lumen_attend_q8_0,
                                               attendFour: lumen_attend4_q8_0)

    /// Values in one unit of the cache (an element, or a block of a quantized cache): a head's
    /// width must be a multiple of it, and the kernels' strides count units.
    package let unitValues: Int
    /// Bytes of one unit.
    package let unitBytes: Int
    /// Writes a head's floats into the cache at a position (`lumen_store_f32`).
    package let store: @convention(c) (UnsafePointer<Float>?, UnsafeMutableRawPointer?, Int) -> Void
    /// One query head over a range of positions, with an attention sink or −∞ (`lumen_attend_f32`).
    package let attend: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                        UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) -> Float
    /// `queriesAtOnce` consecutive tokens' queries of one head (`lumen_attend4_f32`).
    package let attendFour: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, UnsafePointer<Float>?, Int, Int, Int, Float, Float,
                                            UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<Float>?, Int) -> Void
}
