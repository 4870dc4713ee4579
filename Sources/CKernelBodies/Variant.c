// Every kernel body, in the order they build on each other, and the table of the variant being
// compiled: a variant target defines `LUMEN_VARIANT_TABLE` (its table's name) and
// `LUMEN_VARIANT_NAME`, then includes this file. One translation unit, so that every kernel stays
// static and only the table is exported.

#include "KernelTable.h"
#include "Floats.c"
#include "MatrixProduct.c"
#include "ActivationQuantization.c"
#include "LegacyQuants.c"
#include "KQuants.c"
#include "IQ4.c"
#include "Interleaved.c"
#include "Levels.c"
#include "Attention.c"
#include "Fitting.c"
#include "Bandwidth.c"
#include "Formats.c"

/// The variant's entry points.
const struct lumen_kernel_table LUMEN_VARIANT_TABLE = {.variant = LUMEN_VARIANT_NAME, LUMEN_KERNELS(LUMEN_KERNEL_ENTRY)};
