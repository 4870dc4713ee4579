// The kernels compiled for any CPU: the same bodies through SIMDe, which implements the x86
// intrinsics with NEON on Arm and with SSE2 or plain C on other x86-64 CPUs. Chosen when the
// program loads on a CPU without AVX2, FMA or F16C, and the only variant on other architectures
// and in `LUMEN_PORTABLE=1` builds. One translation unit, so that every kernel stays static.

#include "CKernelsPortable.h"
#include "../CKernelBodies/KernelTable.h"
#include "../CKernelBodies/Quantized.c"
#include "../CKernelBodies/Attention.c"
#include "../CKernelBodies/Levels.c"
#include "../CKernelBodies/Interleaved.c"
#include "../CKernelBodies/Fitting.c"

/// The portable variant's entry points.
const struct lumen_kernel_table lumen_kernels_portable = {.variant = "portable", LUMEN_KERNELS(LUMEN_KERNEL_ENTRY)};
