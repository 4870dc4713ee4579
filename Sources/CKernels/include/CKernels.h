#ifndef LUMEN_CKERNELS_H
#define LUMEN_CKERNELS_H

#include "KernelLayout.h"
#include "KernelList.h"

/// The compute kernels: each tensor format's (dequantization, dot products of weight rows with
/// activations; `lumen_format_kernels_at`), matrix products, 8-bit activation quantization,
/// attention, the quantizer's scale searches. Written once with AVX2, FMA and F16C intrinsics,
/// compiled twice (see Dispatch.c): natively for x86-64-v3 CPUs and through SIMDe for every other
/// CPU; the variant the CPU can run is chosen when the program loads. Block layouts are
/// llama.cpp's; quantized `count`s are multiples of 32.

/// "avx2" or "portable": the kernel variant this process runs.
const char *lumen_kernel_variant(void);

#define LUMEN_KERNEL_PROTOTYPE(type, name, parameters, arguments) type lumen_##name parameters;
/// The kernels, declared once in `KernelList.h`.
LUMEN_KERNELS(LUMEN_KERNEL_PROTOTYPE)
#undef LUMEN_KERNEL_PROTOTYPE

#endif
