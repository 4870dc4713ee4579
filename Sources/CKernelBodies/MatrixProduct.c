// The general F32 matrix product `c = a · b` (Tensors' matmul and einsum): both operands packed
// into panels as BLIS does, then a register tile computed per pair of panels — 12 rows × 32
// columns in AVX-512 registers where the CPU has them, 6 × 16 in AVX2 registers otherwise.
//
// Loops, outermost first: the shared axis in blocks of at most `PRODUCT_DEPTH` (so a depth up to
// it — a model's width — writes each element of `c` once, never reading it back), rows of `a` in
// blocks of at most `PRODUCT_ROWS` (packed once per depth block), columns of `b` in blocks of
// `PRODUCT_COLUMNS` (packed, in L2), then one row panel of `a` (in L1) against every column panel
// of the block (streamed from L2). A tile adds its depth block's sum to `c` after the first depth
// block, so every element of `c` is written by one thread, in depth order.

#include <stdlib.h>

#include "Shared.h"

/// The shared axis's block: a row panel of 12 × 576 floats is 27 KiB, in L1.
#define PRODUCT_DEPTH 576
/// Rows of `a` packed at a time (a multiple of both tiles' rows): 516 × 576 floats, 1.2 MiB.
#define PRODUCT_ROWS 516
/// Columns of `b` packed at a time (a multiple of both tiles' columns): 576 × 640 floats, 1.4 MiB,
/// in L2.
#define PRODUCT_COLUMNS 640
/// How many steps of the shared axis ahead a tile asks for its column panel (streamed from L2).
#define PRODUCT_PREFETCH 8

/// One register tile's shape and kernel: `c[i][j] (+)= Σ_p ap[p][i] · bp[p][j]` for a packed row
/// panel `ap` [depth][rows] and column panel `bp` [depth][columns], `c`'s rows `ldc` apart; adds
/// to `c` when `accumulate` is 1, else overwrites it.
struct product_tile {
    long rows, columns;
    void (*kernel)(long depth, const float *ap, const float *bp, float *c, long ldc, int accumulate);
};

static void tile_avx2_6x16(long depth, const float *ap, const float *bp, float *c, long ldc, int accumulate) {
    __m256 acc[6][2];
    for (int i = 0; i < 6; i++) {
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
        // The tile of c, asked for now so that it is in L1 when the sums are done.
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + 8, 1, 3);
    }
    for (long p = 0; p < depth; p++, ap += 6, bp += 16) {
        __builtin_prefetch(bp + 16 * PRODUCT_PREFETCH, 0, 3);
        const __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
        for (int i = 0; i < 6; i++) {
            const __m256 a = _mm256_broadcast_ss(ap + i);
            acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
        }
    }
    for (int i = 0; i < 6; i++) {
        float *row = c + i * ldc;
        if (accumulate) {
            acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(row));
            acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(row + 8));
        }
        _mm256_storeu_ps(row, acc[i][0]);
        _mm256_storeu_ps(row + 8, acc[i][1]);
    }
}

#if LUMEN_NATIVE_AVX2
AVX512_TARGET static void tile_avx512_12x32(long depth, const float *ap, const float *bp, float *c, long ldc, int accumulate) {
    __m512 acc[12][2];
    for (int i = 0; i < 12; i++) {
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + 16, 1, 3);
    }
    for (long p = 0; p < depth; p++, ap += 12, bp += 32) {
        __builtin_prefetch(bp + 32 * PRODUCT_PREFETCH, 0, 3);
        __builtin_prefetch(bp + 32 * PRODUCT_PREFETCH + 16, 0, 3);
        const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
        for (int i = 0; i < 12; i++) {
            const __m512 a = _mm512_set1_ps(ap[i]);
            acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
        }
    }
    for (int i = 0; i < 12; i++) {
        float *row = c + i * ldc;
        if (accumulate) {
            acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(row));
            acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(row + 16));
        }
        _mm512_storeu_ps(row, acc[i][0]);
        _mm512_storeu_ps(row + 16, acc[i][1]);
    }
}
#endif

/// `a`'s `rows` × `depth` block as row panels of `tile_rows` ([depth][tile_rows] each, the last
/// padded with zero rows).
static void pack_rows(const float *a, long a_row, long a_column, long rows, long depth, long tile_rows, float *packed) {
    for (long first = 0; first < rows; first += tile_rows, packed += tile_rows * depth) {
        const long count = rows - first < tile_rows ? rows - first : tile_rows;
        for (long p = 0; p < depth; p++) {
            float *to = packed + p * tile_rows;
            const float *from = a + first * a_row + p * a_column;
            for (long i = 0; i < count; i++) to[i] = from[i * a_row];
            for (long i = count; i < tile_rows; i++) to[i] = 0;
        }
    }
}

/// `b`'s `depth` × `columns` block as column panels of `tile_columns` ([depth][tile_columns]
/// each, the last padded with zero columns).
static void pack_columns(const float *b, long b_row, long b_column, long depth, long columns, long tile_columns, float *packed) {
    for (long first = 0; first < columns; first += tile_columns, packed += tile_columns * depth) {
        const long count = columns - first < tile_columns ? columns - first : tile_columns;
        if (b_column == 1 && count == tile_columns) {
            for (long p = 0; p < depth; p++) memcpy(packed + p * tile_columns, b + p * b_row + first, sizeof(float) * (size_t)tile_columns);
            continue;
        }
        for (long p = 0; p < depth; p++) {
            float *to = packed + p * tile_columns;
            const float *from = b + p * b_row + first * b_column;
            for (long j = 0; j < count; j++) to[j] = from[j * b_column];
            for (long j = count; j < tile_columns; j++) to[j] = 0;
        }
    }
}

static void lumen_matrix_product_f32(long m, long n, long k, const float *a, long a_row, long a_column, const float *b,
                                     long b_row, long b_column, float *c, long c_row, int without_avx512) {
    struct product_tile tile = {6, 16, tile_avx2_6x16};
#if LUMEN_NATIVE_AVX2
    if (has_avx512() && !without_avx512) tile = (struct product_tile){12, 32, tile_avx512_12x32};
#else
    (void)without_avx512;
#endif
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (long i = 0; i < m; i++) memset(c + i * c_row, 0, sizeof(float) * (size_t)n);
        return;
    }
    // Equal depth blocks (1,000 = 2 × 500, not 576 + 424).
    const long depth_blocks = (k + PRODUCT_DEPTH - 1) / PRODUCT_DEPTH, depth_block = (k + depth_blocks - 1) / depth_blocks;
    const long column_block = n < PRODUCT_COLUMNS ? (n + tile.columns - 1) / tile.columns * tile.columns : PRODUCT_COLUMNS;
    const long row_block = m < PRODUCT_ROWS ? (m + tile.rows - 1) / tile.rows * tile.rows : PRODUCT_ROWS;
    // (aligned_alloc wants a multiple of the alignment: 16 floats.)
    float *packed_a = aligned_alloc(64, sizeof(float) * (size_t)((row_block * depth_block + 15) / 16 * 16));
    float *packed_b = aligned_alloc(64, sizeof(float) * (size_t)((depth_block * column_block + 15) / 16 * 16));
    _Alignas(64) float edge[12 * 32];
    for (long pc = 0; pc < k; pc += depth_block) {
        const long depth = k - pc < depth_block ? k - pc : depth_block;
        const int accumulate = pc > 0;
        for (long ic = 0; ic < m; ic += row_block) {
            const long rows = m - ic < row_block ? m - ic : row_block;
            pack_rows(a + ic * a_row + pc * a_column, a_row, a_column, rows, depth, tile.rows, packed_a);
            for (long jc = 0; jc < n; jc += column_block) {
                const long columns = n - jc < column_block ? n - jc : column_block;
                pack_columns(b + pc * b_row + jc * b_column, b_row, b_column, depth, columns, tile.columns, packed_b);
                for (long ir = 0; ir < rows; ir += tile.rows) {
                    const long tile_rows = rows - ir < tile.rows ? rows - ir : tile.rows;
                    for (long jr = 0; jr < columns; jr += tile.columns) {
                        const long tile_columns = columns - jr < tile.columns ? columns - jr : tile.columns;
                        float *out = c + (ic + ir) * c_row + jc + jr;
                        const float *ap = packed_a + ir * depth, *bp = packed_b + jr * depth;
                        if (tile_rows == tile.rows && tile_columns == tile.columns) {
                            tile.kernel(depth, ap, bp, out, c_row, accumulate);
                            continue;
                        }
                        // A tile past an edge of `c`: computed whole aside, its part inside copied.
                        tile.kernel(depth, ap, bp, edge, tile.columns, 0);
                        for (long i = 0; i < tile_rows; i++)
                            for (long j = 0; j < tile_columns; j++)
                                out[i * c_row + j] = (accumulate ? out[i * c_row + j] : 0) + edge[i * tile.columns + j];
                    }
                }
            }
        }
    }
    free(packed_a);
    free(packed_b);
}
