#ifndef LUMEN_KERNEL_LAYOUT_H
#define LUMEN_KERNEL_LAYOUT_H

// Layout constants the kernel bodies and their callers share (the bodies include this header,
// not `CKernels.h`, whose declarations would clash with their static definitions).

/// Tokens in each chunk of a batch's activations from `lumen_quantize_q8_tokens`: the batch is
/// stored (and padded) in whole chunks.
enum { LUMEN_TOKEN_CHUNK = 8 };

/// How activations are quantized to 8 bits for a weight format: llama.cpp's `vec_dot_type` for
/// it, rounded exactly as llama.cpp rounds, so that products match its own bit for bit but for
/// the order of additions. Every layout has a float scale per block of 32 values (`scales`) and
/// the block and half-block sums (`sums`) that the kernels read; the formats differ in how the
/// scales and sums are rounded and in how many values share a scale.
typedef enum {
    /// Q8_0 (for Q4_0, Q5_0, Q8_0, IQ4_NL): blocks of 32, scale max |x| / 127 rounded to F16,
    /// values round(x · 127 / max |x|).
    LUMEN_ACTIVATIONS_Q8_0 = 0,
    /// Q8_1 (for Q4_1, Q5_1): Q8_0's values and scale, and each block's sum (what the weights'
    /// min multiplies) the unrounded scale times the values' sum, rounded to F16.
    LUMEN_ACTIVATIONS_Q8_1 = 1,
    /// Q8_K (for the K-quants and IQ4_XS): blocks of 256 sharing one F32 scale,
    /// values round(x · 127 / max |x|), scale 1 / (127 / max |x|).
    LUMEN_ACTIVATIONS_Q8_K = 2,
} lumen_activation_format;

#endif
