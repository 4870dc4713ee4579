// The kernels compiled for x86-64-v3 (AVX2, FMA and F16C: this target's flags), chosen when the
// program loads on a CPU that has them. One translation unit, so that every kernel stays static
// and only the table is exported.

#include "CKernelsAVX2.h"
#include "../CKernelBodies/KernelTable.h"
#include "../CKernelBodies/Quantized.c"
#include "../CKernelBodies/Attention.c"
#include "../CKernelBodies/Levels.c"
#include "../CKernelBodies/Interleaved.c"
#include "../CKernelBodies/Fitting.c"

#if !LUMEN_NATIVE_AVX2
#error "CKernelsAVX2 must be compiled with -mavx2 -mfma -mf16c"
#endif

/// The AVX2 variant's entry points.
const struct lumen_kernel_table lumen_kernels_avx2 = {.variant = "avx2", LUMEN_KERNELS(LUMEN_KERNEL_ENTRY)};
