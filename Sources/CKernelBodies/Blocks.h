#ifndef LUMEN_CKERNELS_BLOCKS_H
#define LUMEN_CKERNELS_BLOCKS_H

// What the format families' kernels share (LegacyQuants.c, KQuants.c, IQ4.c): the integer
// product of unsigned and signed bytes, nibble unpacking, the widening F32 dot product, and the
// levels every decoder writes.

#include "Shared.h"

/// Unsigned bytes `u` × signed bytes `s`, summed in fours into eight int32 lanes: with AVX2
/// (`vpmaddubsw`, then pairs of its 16-bit sums), and with one AVX-512 VNNI instruction.
#define PRODUCTS_AVX2(u, s) _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1))
#define PRODUCTS_VNNI(u, s) _mm256_dpbusd_epi32(_mm256_setzero_si256(), (u), (s))

/// Defines `NAME`, a format's `dot_q8_tokens`: `row_count` rows `row_bytes` apart against `tokens`
/// tokens' 8-bit activations (token t's at `values + t * count`, `scales + t * count / 32`,
/// `sums + 3 * t * count / 32`), row r's product with token t into `out[t * out_stride + r]`.
/// `DEFINE(NAME, ATTRIBUTES, PRODUCTS, TOKENS)` defines a kernel for one row and `TOKENS` tokens at
/// once, each token's arithmetic the format's `dot_q8`'s exactly (so the results are bit for bit
/// `SINGLE`'s): tokens go `WIDE` at a time, then a pair, and a last one through `SINGLE`. The loop
/// over rows is here, not in the caller: a row of a small model is a few blocks, and a call per
/// row would cost as much as its arithmetic.
#define DEFINE_Q8_TOKENS(NAME, DEFINE, WIDE, SINGLE)                                                           \
    DEFINE(NAME##_wide_avx2, , PRODUCTS_AVX2, WIDE)                                                              \
    VNNI_VARIANT(DEFINE(NAME##_wide_vnni, VNNI_TARGET, PRODUCTS_VNNI, WIDE))                                     \
    DEFINE(NAME##_pair_avx2, , PRODUCTS_AVX2, 2)                                                                 \
    VNNI_VARIANT(DEFINE(NAME##_pair_vnni, VNNI_TARGET, PRODUCTS_VNNI, 2))                                        \
    static void NAME(const void *rows, long row_bytes, long row_count, const signed char *values, const float *scales, \
                     const float *sums, long count, long tokens, float *out, long out_stride, int without_vnni) { \
        const long blocks = count / 32;                                                                          \
        for (long r = 0; r < row_count; r++) {                                                                   \
            const void *row = (const uint8_t *)rows + r * row_bytes;                                             \
            long t = 0;                                                                                          \
            for (; t + (WIDE) <= tokens; t += (WIDE)) {                                                          \
                const signed char *v = values + t * count;                                                       \
                const float *d = scales + t * blocks, *m = sums + 3 * t * blocks;                                \
                CHOOSE_VNNI(without_vnni, NAME##_wide_vnni(row, v, d, m, count, out + t * out_stride + r, out_stride), \
                            NAME##_wide_avx2(row, v, d, m, count, out + t * out_stride + r, out_stride));        \
            }                                                                                                    \
            for (; t + 2 <= tokens; t += 2) {                                                                    \
                const signed char *v = values + t * count;                                                       \
                const float *d = scales + t * blocks, *m = sums + 3 * t * blocks;                                \
                CHOOSE_VNNI(without_vnni, NAME##_pair_vnni(row, v, d, m, count, out + t * out_stride + r, out_stride), \
                            NAME##_pair_avx2(row, v, d, m, count, out + t * out_stride + r, out_stride));        \
            }                                                                                                    \
            for (; t < tokens; t++)                                                                              \
                out[t * out_stride + r] = SINGLE(row, values + t * count, scales + t * blocks, sums + 3 * t * blocks, \
                                                 count, without_vnni);                                           \
        }                                                                                                        \
    }

/// Defines `NAME`, a format's `dot_q8`, and `NAME##_tokens`, its `dot_q8_tokens`, from one
/// several-token kernel `DEFINE(NAME, ATTRIBUTES, PRODUCTS, TOKENS)` (see `DEFINE_Q8_TOKENS`):
/// `NAME` is that kernel for one token, so the format's arithmetic is stated once and every token
/// of a batch gets bit for bit `NAME`'s product.
#define DEFINE_Q8_DOT_AND_TOKENS(NAME, DEFINE)                                                                   \
    DEFINE(NAME##_one_avx2, , PRODUCTS_AVX2, 1)                                                                  \
    VNNI_VARIANT(DEFINE(NAME##_one_vnni, VNNI_TARGET, PRODUCTS_VNNI, 1))                                         \
    static float NAME(const void *row, const signed char *values, const float *scales, const float *sums, long count, \
                      int without_vnni) {                                                                        \
        float out;                                                                                               \
        CHOOSE_VNNI(without_vnni, NAME##_one_vnni(row, values, scales, sums, count, &out, 1),                    \
                    NAME##_one_avx2(row, values, scales, sums, count, &out, 1));                                 \
        return out;                                                                                              \
    }                                                                                                            \
    DEFINE_Q8_TOKENS(NAME##_tokens, DEFINE, 4, NAME)

/// 16 bytes of packed nibbles (a Q4_0 or Q5_0 block's) as 32 unsigned bytes in weight order: low
/// nibbles are weights 0-15, high nibbles weights 16-31.
static inline __m256i unpack_nibbles(const uint8_t *packed, __m256i low_mask) {
    // The 16 bytes in both halves (a broadcasting load), the upper half shifted down a nibble.
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)packed));
    return _mm256_and_si256(_mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), low_mask);
}

/// The F16 scales of four consecutive Q4_0 blocks, as floats.
static inline __m128 q4_0_scales4(const uint8_t *block) {
    uint16_t h0, h1, h2, h3;
    memcpy(&h0, block, 2);
    memcpy(&h1, block + 18, 2);
    memcpy(&h2, block + 36, 2);
    memcpy(&h3, block + 54, 2);
    return _mm_cvtph_ps(_mm_setr_epi16((short)h0, (short)h1, (short)h2, (short)h3, 0, 0, 0, 0));
}

/// Defines `NAME(row, x, count)`: a row of `BLOCK`-element, `BYTES`-byte blocks dotted with F32
/// activations by widening one block at a time with `DEQUANTIZE` (the exact, F32-activation path).
#define DEFINE_WIDENING_DOT(NAME, DEQUANTIZE, BLOCK, BYTES)                                       \
    static float NAME(const void *row, const float *x, long count) {                                    \
        float widened[BLOCK];                                                                    \
        __m256 sum = _mm256_setzero_ps();                                                        \
        for (long b = 0; b < count / (BLOCK); b++, x += (BLOCK)) {                               \
            DEQUANTIZE((const uint8_t *)row + (BYTES) * b, widened, (BLOCK));                    \
            for (int i = 0; i < (BLOCK); i += 8)                                                 \
                sum = _mm256_fmadd_ps(_mm256_loadu_ps(widened + i), _mm256_loadu_ps(x + i), sum); \
        }                                                                                        \
        return horizontal_sum(sum);                                                              \
    }

// Every quantized format stores, for each group of 16 weights, w = scale · u + min with u a small
// unsigned integer (the 0–255 range covers them all: Q8_0's and IQ4's signed values are shifted
// by 128, Q3_K's by 4, Q6_K's are stored unsigned already). The decoders below write a row in
// that one shape, exactly: each format's own offsets move into `min`.

/// Writes `scale`, `min` for the two groups of 16 that a 32-weight block with one scale covers.
static inline void two_groups(float *scales, float *mins, long block, float scale, float min) {
    scales[2 * block] = scales[2 * block + 1] = scale;
    mins[2 * block] = mins[2 * block + 1] = min;
}

/// Q4_0, Q4_1, Q5_0 and Q5_1: `nibbles` are weights 0–15 (low) and 16–31 (high), `high` their
/// fifth bits (or 0): bit i of `high` is spread to byte i (each byte picks its word byte with a
/// shuffle and tests its own bit).
static inline void nibble_levels(const uint8_t *nibbles, uint32_t high, uint8_t *levels) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)nibbles), mask = _mm_set1_epi8(0x0F);
    const __m256i low = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), _mm_and_si128(packed, mask));
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)high),
                                               _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bits = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits), _mm256_set1_epi8(0x10));
    _mm256_storeu_si256((__m256i *)levels, _mm256_or_si256(low, fifth));
}

/// The four bytes at `p` (any alignment) as one 32-bit word, for broadcasting four activations.
static inline int32_t load_word(const signed char *p) {
    int32_t word;
    memcpy(&word, p, 4);
    return word;
}

#endif
