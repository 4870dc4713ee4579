// The exported kernels: each calls the same kernel of the variant chosen when the program loads,
// AVX2 on x86-64 CPUs that have AVX2, FMA and F16C (unless LUMEN_KERNELS=portable), the portable
// (SIMDe) one otherwise. The choice is made once, before `main`, so a kernel call costs one
// indirect jump more.

#include <stdlib.h>
#include <string.h>

#include "CKernels.h"
#include "../CKernelBodies/KernelTable.h"
#include "CKernelsPortable.h"
#if LUMEN_HAS_AVX2_VARIANT
#include "CKernelsAVX2.h"
#endif

static const struct lumen_kernel_table *active = &lumen_kernels_portable;

/// Chooses the variant this CPU can run, or the portable one when the environment's
/// LUMEN_KERNELS is "portable" (so one build tests both).
__attribute__((constructor)) static void choose_kernels(void) {
#if LUMEN_HAS_AVX2_VARIANT
    const char *forced = getenv("LUMEN_KERNELS");
    if (forced && strcmp(forced, "portable") == 0) return;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) active = &lumen_kernels_avx2;
#endif
}

const char *lumen_kernel_variant(void) { return active->variant; }

#define LUMEN_KERNEL_CALL(type, name, parameters, arguments) \
    type lumen_##name parameters { return active->name arguments; }
LUMEN_KERNELS(LUMEN_KERNEL_CALL)
