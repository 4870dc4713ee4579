// The kernels compiled for any CPU: the same bodies through SIMDe, which implements the x86
// intrinsics with NEON on Arm and with SSE2 or plain C on other x86-64 CPUs. Chosen when the
// program loads on a CPU without AVX2, FMA or F16C, and the only variant on other architectures
// and in `LUMEN_PORTABLE=1` builds.

#include "CKernelsPortable.h"

#define LUMEN_VARIANT_TABLE lumen_kernels_portable
#define LUMEN_VARIANT_NAME "portable"
#include "../CKernelBodies/Variant.c"
