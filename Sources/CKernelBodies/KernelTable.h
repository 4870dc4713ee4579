#ifndef LUMEN_KERNEL_TABLE_H
#define LUMEN_KERNEL_TABLE_H

// A variant's table of entry points, one field per kernel of `KernelList.h`: each variant target
// compiles the kernel bodies and fills one (Variant.c); Dispatch.c exports functions that call
// through the table the process chose.

#include "../CKernels/include/KernelList.h"

#define LUMEN_KERNEL_FIELD(type, name, parameters, arguments) type (*name) parameters;
#define LUMEN_KERNEL_ENTRY(type, name, parameters, arguments) .name = lumen_##name,

/// One variant's entry points, by kernel name.
struct lumen_kernel_table {
    /// "avx2" or "portable".
    const char *variant;
    LUMEN_KERNELS(LUMEN_KERNEL_FIELD)
};

#endif
