#ifndef LUMEN_CKERNELS_PORTABLE_H
#define LUMEN_CKERNELS_PORTABLE_H

struct lumen_kernel_table;

/// The portable variant's entry points (see `KernelTable.h`), for `CKernels` to call through.
extern const struct lumen_kernel_table lumen_kernels_portable;

#endif
