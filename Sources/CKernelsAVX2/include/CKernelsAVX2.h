#ifndef LUMEN_CKERNELS_AVX2_H
#define LUMEN_CKERNELS_AVX2_H

struct lumen_kernel_table;

/// The AVX2 variant's entry points (see `KernelTable.h`), for `CKernels` to call through.
extern const struct lumen_kernel_table lumen_kernels_avx2;

#endif
