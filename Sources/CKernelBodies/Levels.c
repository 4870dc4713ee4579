#include "Blocks.h"
#include "../CKernels/include/KernelLayout.h"

// The matrix–matrix product of prompt batches on rows decoded as levels: every quantized
// format's `levels` decoder (its row in Formats.c) writes its rows in the one shape this product
// multiplies.

/// Rows decoded and interleaved eight at a time: for each group g of 16 weights, 128 bytes in
/// which the 32-byte chunk c holds weights 4c…4c+3 of rows 0…7 (4 bytes each, a 32-bit lane per
/// row), then the group's eight scales and eight mins. One `vpdpbusd` with a token's four
/// activations broadcast gives eight rows' partial sums.
enum { TILE_ROWS = 8 };

/// Decodes rows `[0, count)` (`count` ≤ 8) of `w` into the tile at `tile`, zero rows after.
static void build_tile(lumen_levels_fn decode, const uint8_t *w, long row_bytes, long count, long k,
                       uint8_t *tile, float *tile_scales, float *tile_mins, uint8_t *row_levels, float *row_scales, float *row_mins) {
    const long groups = k / 16;
    for (long r = 0; r < TILE_ROWS; r++) {
        if (r < count) {
            decode(w + r * row_bytes, row_levels, row_scales, row_mins, k);
        } else {
            memset(row_levels, 0, (size_t)k);
            for (long g = 0; g < groups; g++) row_scales[g] = row_mins[g] = 0.0f;
        }
        for (long g = 0; g < groups; g++) {
            for (int c = 0; c < 4; c++) memcpy(tile + 128 * g + 32 * c + 4 * r, row_levels + 16 * g + 4 * c, 4);
            tile_scales[TILE_ROWS * g + r] = row_scales[g];
            tile_mins[TILE_ROWS * g + r] = row_mins[g];
        }
    }
}

/// Eight rows' integer sums over one group against one token's 16 activations at `x`, as two
/// independent chains of two `vpdpbusd` (a chain of four would wait on each one's latency).
#define GROUP_SUMS_VNNI(w, x)                                                                            \
    _mm256_add_epi32(                                                                                     \
        _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), (w)[0], _mm256_set1_epi32(load_word((x)))), \
                            (w)[1], _mm256_set1_epi32(load_word((x) + 4))),                               \
        _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), (w)[2], _mm256_set1_epi32(load_word((x) + 8))), \
                            (w)[3], _mm256_set1_epi32(load_word((x) + 12))))

/// AVX2 has no unsigned × signed byte product into 32 bits; `vpmaddubsw` saturates at 16 bits
/// for levels above 63, so each level is split into its nibbles (15 · 127 · 2 fits) and the high
/// nibbles' sums weighted by 16.
__attribute__((always_inline)) static inline __m256i group_sums_avx2(const __m256i *w, const signed char *x) {
    const __m256i mask = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256i low = _mm256_setzero_si256(), high = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        const __m256i activations = _mm256_set1_epi32(load_word(x + 4 * c));
        low = _mm256_add_epi32(low, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w[c], mask), activations), ones));
        high = _mm256_add_epi32(high, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(w[c], 4), mask), activations), ones));
    }
    return _mm256_add_epi32(low, _mm256_slli_epi32(high, 4));
}
#define GROUP_SUMS_AVX2(w, x) group_sums_avx2((w), (x))

/// Defines the tile kernel over spans of `SPAN` weights (16, or 32 when each pair of groups
/// shares its scale and min): eight rows × `TOKENS` tokens of a chunk (`lumen_quantize_q8_tokens`)
/// at a time, the tokens' accumulators in registers (a constant count, so the token loop unrolls,
/// and each token's activations, scale and sum lie at a constant offset from the span's). For each
/// span the eight rows' integer sums are scaled by the rows' scales times the token's block scale,
/// and the rows' mins times the token's sum over the span (block or half-block sum) are added.
#define DEFINE_LEVELS_TILE(NAME, ATTRIBUTES, GROUP_SUMS, TOKENS, SPAN)                                    \
    /* Tokens `[0, valid)` of the `TOKENS` at `values`, `scales` and `sums` (a chunk's, offset to the  \
       first); `out` is the first token's output. */                                                     \
    ATTRIBUTES static void NAME##_tokens(const uint8_t *tile, const float *tile_scales, const float *tile_mins, long k, \
                                         const signed char *values, const float *scales, const float *sums, \
                                         float *out, long out_stride, long rows, long valid) {            \
        const long groups = k / 16, blocks = k / 32;                                                      \
        __m256 acc[TOKENS];                                                                               \
        for (int u = 0; u < (TOKENS); u++) acc[u] = _mm256_setzero_ps();                                  \
        for (long g = 0; g < groups; g += (SPAN) / 16) {                                                  \
            __m256i w[4], next[4];                                                                        \
            for (int c = 0; c < 4; c++) w[c] = _mm256_loadu_si256((const __m256i *)(tile + 128 * g + 32 * c)); \
            if ((SPAN) == 32)                                                                             \
                for (int c = 0; c < 4; c++) next[c] = _mm256_loadu_si256((const __m256i *)(tile + 128 * (g + 1) + 32 * c)); \
            const __m256 row_scales = _mm256_loadu_ps(tile_scales + TILE_ROWS * g), row_mins = _mm256_loadu_ps(tile_mins + TILE_ROWS * g); \
            const signed char *x = values + TOKEN_CHUNK * 16 * g;                                         \
            const float *span_scales = scales + TOKEN_CHUNK * (g / 2);                                    \
            const float *span_sums = (SPAN) == 32 ? sums + TOKEN_CHUNK * (g / 2) : sums + TOKEN_CHUNK * (blocks + g); \
            _Pragma("clang loop unroll(full)")                                                            \
            for (int u = 0; u < (TOKENS); u++) {                                                          \
                __m256i integer = GROUP_SUMS(w, x + 16 * u);                                              \
                if ((SPAN) == 32) integer = _mm256_add_epi32(integer, GROUP_SUMS(next, x + TOKEN_CHUNK * 16 + 16 * u)); \
                const __m256 scaled = _mm256_mul_ps(row_scales, _mm256_set1_ps(span_scales[u]));         \
                acc[u] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(integer), scaled, acc[u]);                   \
                acc[u] = _mm256_fmadd_ps(row_mins, _mm256_set1_ps(span_sums[u]), acc[u]);                \
            }                                                                                             \
        }                                                                                                 \
        float lanes[TILE_ROWS];                                                                           \
        for (long u = 0; u < valid; u++) {                                                                \
            _mm256_storeu_ps(lanes, acc[u]);                                                              \
            for (long r = 0; r < rows; r++) out[u * out_stride + r] = lanes[r];                           \
        }                                                                                                 \
    }                                                                                                     \
    static void NAME(const uint8_t *tile, const float *tile_scales, const float *tile_mins, long k,        \
                     const signed char *values, const float *scales, const float *sums, long tokens,      \
                     float *out, long out_stride, long rows) {                                            \
        const long blocks = k / 32;                                                                       \
        for (long t = 0; t < tokens; t += (TOKENS)) {                                                     \
            const long chunk = t / TOKEN_CHUNK, first = t % TOKEN_CHUNK;                                  \
            NAME##_tokens(tile, tile_scales, tile_mins, k, values + TOKEN_CHUNK * k * chunk + 16 * first, \
                          scales + TOKEN_CHUNK * blocks * chunk + first, sums + 3 * TOKEN_CHUNK * blocks * chunk + first, \
                          out + t * out_stride, out_stride, rows, tokens - t < (TOKENS) ? tokens - t : (TOKENS)); \
        }                                                                                                 \
    }

DEFINE_LEVELS_TILE(levels_tile_avx2, , GROUP_SUMS_AVX2, 4, 16)
DEFINE_LEVELS_TILE(levels_pairs_avx2, , GROUP_SUMS_AVX2, 4, 32)
VNNI_VARIANT(DEFINE_LEVELS_TILE(levels_tile_vnni, VNNI_TARGET, GROUP_SUMS_VNNI, 8, 16))
VNNI_VARIANT(DEFINE_LEVELS_TILE(levels_pairs_vnni, VNNI_TARGET, GROUP_SUMS_VNNI, 8, 32))

/// Whether each pair of groups in the tile shares its scales and mins, so the kernel can take
/// spans of 32 (one scaling per 32 weights instead of two).
static int pairs_share_scales(const float *tile_scales, const float *tile_mins, long groups) {
    for (long g = 0; g < groups; g += 2)
        if (memcmp(tile_scales + TILE_ROWS * g, tile_scales + TILE_ROWS * (g + 1), TILE_ROWS * sizeof(float)) != 0 ||
            memcmp(tile_mins + TILE_ROWS * g, tile_mins + TILE_ROWS * (g + 1), TILE_ROWS * sizeof(float)) != 0)
            return 0;
    return 1;
}

static long lumen_matmul_levels_workspace(long k) {
    return (TILE_ROWS + 1) * k + (2 * TILE_ROWS + 2) * (k / 16) * (long)sizeof(float);
}

static void lumen_matmul_levels_q8(lumen_levels_fn decode, const void *w, long row_bytes, long rows, const signed char *values,
                            const float *scales, const float *sums, long tokens, long k, float *out, long out_stride,
                            void *workspace, int without_vnni) {
    const long groups = k / 16;
    uint8_t *tile = (uint8_t *)workspace, *row_levels = tile + TILE_ROWS * k;
    float *tile_scales = (float *)(row_levels + k);
    float *tile_mins = tile_scales + TILE_ROWS * groups, *row_scales = tile_mins + TILE_ROWS * groups, *row_mins = row_scales + groups;
    for (long r = 0; r < rows; r += TILE_ROWS) {
        const long count = rows - r < TILE_ROWS ? rows - r : TILE_ROWS;
        build_tile(decode, (const uint8_t *)w + r * row_bytes, row_bytes, count, k, tile, tile_scales, tile_mins, row_levels, row_scales, row_mins);
        const int pairs = pairs_share_scales(tile_scales, tile_mins, groups);
        if (pairs)
            CHOOSE_VNNI(without_vnni, levels_pairs_vnni(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count),
                        levels_pairs_avx2(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count));
        else
            CHOOSE_VNNI(without_vnni, levels_tile_vnni(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count),
                        levels_tile_avx2(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count));
    }
}
