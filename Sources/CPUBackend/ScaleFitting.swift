import CKernels

/// The quantizer's scale searches in C (its inner loops), as llama-quantize fits each sub-block.
package enum ScaleFitting {
    /// The K-quant fit of one sub-block (a multiple of 8 values): `value ≈ scale · level + offset`
    /// with `level` in `0...levels` and `offset ≤ 0`, least squares weighted by `weights`, over 21
    /// candidate scales (`lumen_fit_affine`): the best scale and its offset.
    package static func affine(_ x: UnsafeBufferPointer<Float>, weights: UnsafeBufferPointer<Float>, levels: Int) -> (scale: Float, offset: Float) {
        var offset: Float = 0
        let scale = lumen_fit_affine(x.baseAddress, weights.baseAddress, Int32(x.count), Int32(levels), &offset)
        return (scale, offset)
    }

    /// The symmetric fit of one sub-block (a multiple of 8 values): `value ≈ scale · level` with
    /// `level` in `-maxLevel..<maxLevel`, each value weighted by its square, over 19 candidate
    /// scales (`lumen_fit_symmetric`); 0 for an all-zero block.
    package static func symmetric(_ x: UnsafeBufferPointer<Float>, maxLevel: Int) -> Float {
        lumen_fit_symmetric(x.baseAddress, Int32(x.count), Int32(maxLevel))
    }
}
