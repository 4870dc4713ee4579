// The kernels compiled for x86-64-v3 (AVX2, FMA and F16C: this target's flags), chosen when the
// program loads on a CPU that has them.

#include "CKernelsAVX2.h"
#include "../CKernelBodies/Shared.h"

#if !LUMEN_NATIVE_AVX2
#error "CKernelsAVX2 must be compiled with -mavx2 -mfma -mf16c"
#endif

#define LUMEN_VARIANT_TABLE lumen_kernels_avx2
#define LUMEN_VARIANT_NAME "avx2"
#include "../CKernelBodies/Variant.c"
