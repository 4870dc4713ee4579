#ifndef LUMEN_KERNEL_LAYOUT_H
#define LUMEN_KERNEL_LAYOUT_H

// Layout constants the kernel bodies and their callers share (the bodies include this header,
// not `CKernels.h`, whose declarations would clash with their static definitions).

/// Tokens in each chunk of a batch's activations from `lumen_quantize_q8_tokens`: the batch is
/// stored (and padded) in whole chunks.
enum { LUMEN_TOKEN_CHUNK = 8 };

#endif
