// The 32-weight formats llama.cpp calls legacy quants: Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1. Each
// has a dequantization, an F32 dot product, a dot product with 8-bit activations and a levels
// decoder; its row in Formats.c names them.

#include "Blocks.h"

// MARK: - Q8_0

/// Eight int8 values at `p` as floats.
static inline __m256 int8x8_to_float(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

static void dequantize_q8_0(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 34, out += 32) {
        const __m256 scale = _mm256_set1_ps(half_to_float(block));
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(scale, int8x8_to_float((const int8_t *)(block + 2) + 8 * i)));
    }
}

static float dot_q8_0(const void *row, const float *x, long count) {
    const uint8_t *block = (const uint8_t *)row;
    __m256 total = _mm256_setzero_ps();
    for (long b = 0; b < count / 32; b++, block += 34, x += 32) {
        const int8_t *q = (const int8_t *)(block + 2);
        __m256 sum = _mm256_mul_ps(int8x8_to_float(q), _mm256_loadu_ps(x));
        sum = _mm256_fmadd_ps(int8x8_to_float(q + 8), _mm256_loadu_ps(x + 8), sum);
        sum = _mm256_fmadd_ps(int8x8_to_float(q + 16), _mm256_loadu_ps(x + 16), sum);
        sum = _mm256_fmadd_ps(int8x8_to_float(q + 24), _mm256_loadu_ps(x + 24), sum);
        total = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block)), sum, total);
    }
    return horizontal_sum(total);
}

/// Q8_0 (one F16 scale, 32 signed bytes) · 8-bit activations for `TOKENS` tokens at once (token t's
/// at `values + t * count`, `scales + t * count / 32`; Q8_0 has no offset, so `sums` is unused),
/// into `out[t * out_stride]`. Signed bytes times signed bytes as `PRODUCTS` of the weights'
/// magnitudes and the activations given the weights' signs (no sum overflows: |w| ≤ 128,
/// |x| ≤ 127), so AVX2 and VNNI give the same sums. Each token adds its blocks four at a time into
/// four sums, whatever `TOKENS` is (`DEFINE_Q8_DOT_AND_TOKENS`).
#define DEFINE_Q8_0_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                       \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                      \
        (void)sums;                                                                                             \
        const uint8_t *blocks = (const uint8_t *)row;                                                           \
        const long n = count / 32;                                                                              \
        __m256 sum[TOKENS][4];                                                                                  \
        for (int t = 0; t < (TOKENS); t++)                                                                      \
            for (int i = 0; i < 4; i++) sum[t][i] = _mm256_setzero_ps();                                        \
        long b = 0;                                                                                             \
        for (; b + 3 < n; b += 4) {                                                                             \
            prefetch_weights_ahead(blocks + 34 * b, 4 * 34);                                                    \
            Q8_TOKENS_BLOCK(b, 0, TOKENS, PRODUCTS)                                                             \
            Q8_TOKENS_BLOCK(b + 1, 1, TOKENS, PRODUCTS)                                                         \
            Q8_TOKENS_BLOCK(b + 2, 2, TOKENS, PRODUCTS)                                                         \
            Q8_TOKENS_BLOCK(b + 3, 3, TOKENS, PRODUCTS)                                                         \
        }                                                                                                       \
        for (; b < n; b++) { Q8_TOKENS_BLOCK(b, 0, TOKENS, PRODUCTS) }                                          \
        for (int t = 0; t < (TOKENS); t++)                                                                      \
            out[t * out_stride] = horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum[t][0], sum[t][1]), _mm256_add_ps(sum[t][2], sum[t][3]))); \
    }
/// One block of `DEFINE_Q8_0_Q8_KERNEL` into each token's sum `accumulator`, the weights
/// loaded and their magnitudes taken once.
#define Q8_TOKENS_BLOCK(index, accumulator, TOKENS, PRODUCTS)                                                  \
    {                                                                                                          \
        const uint8_t *block = blocks + 34 * (index);                                                          \
        const __m256i weights = _mm256_loadu_si256((const __m256i *)(block + 2));                              \
        const __m256i magnitudes = _mm256_sign_epi8(weights, weights);                                         \
        const float scale = half_to_float(block);                                                              \
        for (int t = 0; t < (TOKENS); t++) {                                                                   \
            const __m256i x = _mm256_loadu_si256((const __m256i *)(values + t * count + 32 * (index)));        \
            const __m256 p = _mm256_cvtepi32_ps(PRODUCTS(magnitudes, _mm256_sign_epi8(x, weights)));            \
            sum[t][accumulator] = _mm256_fmadd_ps(_mm256_set1_ps(scale * scales[t * n + (index)]), p, sum[t][accumulator]); \
        }                                                                                                      \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q8_0_q8, DEFINE_Q8_0_Q8_KERNEL)

static void levels_q8_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 34, levels += 32) {
        const float d = half_to_float(block);
        for (int j = 0; j < 32; j++) levels[j] = (uint8_t)(block[2 + j] ^ 0x80);
        two_groups(scales, mins, b, d, -128.0f * d);
    }
}

// MARK: - Q4_0

static void dequantize_q4_0(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    const __m128i low_mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    for (long b = 0; b < count / 32; b++, block += 18, out += 32) {
        const __m256 scale = _mm256_set1_ps(half_to_float(block));
        const __m128i packed = _mm_loadu_si128((const __m128i *)(block + 2));
        const __m128i low = _mm_sub_epi8(_mm_and_si128(packed, low_mask), eight);
        const __m128i high = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(packed, 4), low_mask), eight);
        _mm256_storeu_ps(out, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(low))));
        _mm256_storeu_ps(out + 8, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(low, 8)))));
        _mm256_storeu_ps(out + 16, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(high))));
        _mm256_storeu_ps(out + 24, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(high, 8)))));
    }
}

static float dot_q4_0(const void *row, const float *x, long count) {
    const uint8_t *block = (const uint8_t *)row;
    const __m128i low_mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    __m256 total = _mm256_setzero_ps();
    for (long b = 0; b < count / 32; b++, block += 18, x += 32) {
        __m128i packed = _mm_loadu_si128((const __m128i *)(block + 2));
        __m128i low = _mm_sub_epi8(_mm_and_si128(packed, low_mask), eight);
        __m128i high = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(packed, 4), low_mask), eight);
        __m256 sum = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(low)), _mm256_loadu_ps(x));
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(low, 8))), _mm256_loadu_ps(x + 8), sum);
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(high)), _mm256_loadu_ps(x + 16), sum);
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(high, 8))), _mm256_loadu_ps(x + 24), sum);
        total = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block)), sum, total);
    }
    return horizontal_sum(total);
}

/// Token `t`'s activations of Q4_0 block `b` times its unpacked nibbles `weights`, times `SCALE`
/// (weight scale × activation scale, broadcast), added into `acc`.
#define Q4_0_Q8_STEP(PRODUCTS, weights, t, b, acc, SCALE)                                                    \
    {                                                                                                        \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + (t) * count + 32 * (b))); \
        acc = _mm256_fmadd_ps(SCALE, _mm256_cvtepi32_ps(PRODUCTS((weights), activations)), acc);              \
    }

/// Defines a Q4_0 × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`). Weights are
/// nibbles minus 8: the unsigned nibbles (unpacked once for all the tokens) meet the signed
/// activations directly, and the 8 · scale · sum(activations) each block owes is accumulated as a
/// vector and subtracted at the end. Four blocks per step: their scales are converted once and
/// multiplied by each token's in one vector, and each block's products go to an accumulator of
/// their own.
#define DEFINE_Q4_0_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                            \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                  \
        const uint8_t *blocks = (const uint8_t *)row;                                                       \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                    \
        const long n = count / 32;                                                                          \
        __m128 offsets[TOKENS];                                                                             \
        __m256 sum[TOKENS][4];                                                                              \
        for (int t = 0; t < (TOKENS); t++) {                                                                \
            offsets[t] = _mm_setzero_ps();                                                                  \
            for (int i = 0; i < 4; i++) sum[t][i] = _mm256_setzero_ps();                                    \
        }                                                                                                   \
        long b = 0;                                                                                         \
        for (; b + 3 < n; b += 4) {                                                                         \
            prefetch_weights_ahead(blocks + 18 * b, 4 * 18);                                                \
            const __m128 weight_scales = q4_0_scales4(blocks + 18 * b);                                     \
            const __m256i w0 = unpack_nibbles(blocks + 18 * b + 2, low_mask), w1 = unpack_nibbles(blocks + 18 * b + 20, low_mask); \
            const __m256i w2 = unpack_nibbles(blocks + 18 * b + 38, low_mask), w3 = unpack_nibbles(blocks + 18 * b + 56, low_mask); \
            for (int t = 0; t < (TOKENS); t++) {                                                            \
                offsets[t] = _mm_fmadd_ps(weight_scales, _mm_loadu_ps(sums + 3 * t * n + b), offsets[t]);   \
                const __m256 both = _mm256_castps128_ps256(_mm_mul_ps(weight_scales, _mm_loadu_ps(scales + t * n + b))); \
                Q4_0_Q8_STEP(PRODUCTS, w0, t, b, sum[t][0], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(0))) \
                Q4_0_Q8_STEP(PRODUCTS, w1, t, b + 1, sum[t][1], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(1))) \
                Q4_0_Q8_STEP(PRODUCTS, w2, t, b + 2, sum[t][2], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(2))) \
                Q4_0_Q8_STEP(PRODUCTS, w3, t, b + 3, sum[t][3], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(3))) \
            }                                                                                               \
        }                                                                                                   \
        float offset[TOKENS];                                                                               \
        for (int t = 0; t < (TOKENS); t++) offset[t] = 0.0f;                                                \
        for (; b < n; b++) {                                                                                \
            const float scale = half_to_float(blocks + 18 * b);                                             \
            const __m256i w = unpack_nibbles(blocks + 18 * b + 2, low_mask);                                \
            for (int t = 0; t < (TOKENS); t++) {                                                            \
                offset[t] += scale * sums[3 * t * n + b];                                                   \
                Q4_0_Q8_STEP(PRODUCTS, w, t, b, sum[t][0], _mm256_set1_ps(scale * scales[t * n + b]))       \
            }                                                                                               \
        }                                                                                                   \
        for (int t = 0; t < (TOKENS); t++) {                                                                \
            const __m128 pairs = _mm_add_ps(offsets[t], _mm_movehl_ps(offsets[t], offsets[t]));             \
            offset[t] += _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));                          \
            out[t * out_stride] = horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum[t][0], sum[t][1]), _mm256_add_ps(sum[t][2], sum[t][3]))) \
                                  - 8.0f * offset[t];                                                       \
        }                                                                                                   \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q4_0_q8, DEFINE_Q4_0_Q8_KERNEL)

static void levels_q4_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, levels += 32) {
        const float d = half_to_float(block);
        nibble_levels(block + 2, 0, levels);
        two_groups(scales, mins, b, d, -8.0f * d);
    }
}

// MARK: - Q4_1

/// Q4_1 blocks: F16 scale `d`, F16 minimum `m`, 16 bytes of nibbles (low: weights 0–15, high:
/// 16–31); w = d·q + m.
static void dequantize_q4_1(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    for (long b = 0; b < count / 32; b++, block += 20, out += 32) {
        const __m256 scale = _mm256_set1_ps(half_to_float(block)), minimum = _mm256_set1_ps(half_to_float(block + 2));
        const __m128i packed = _mm_loadu_si128((const __m128i *)(block + 4));
        const __m128i low = _mm_and_si128(packed, low_mask);
        const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);
        _mm256_storeu_ps(out, _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(low)), minimum));
        _mm256_storeu_ps(out + 8, _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(low, 8))), minimum));
        _mm256_storeu_ps(out + 16, _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(high)), minimum));
        _mm256_storeu_ps(out + 24, _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(high, 8))), minimum));
    }
}

static float dot_q4_1(const void *row, const float *x, long count) {
    const uint8_t *block = (const uint8_t *)row;
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    __m256 total = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();
    for (long b = 0; b < count / 32; b++, block += 20, x += 32) {
        const __m128i packed = _mm_loadu_si128((const __m128i *)(block + 4));
        const __m128i low = _mm_and_si128(packed, low_mask);
        const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);
        const __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8), x2 = _mm256_loadu_ps(x + 16), x3 = _mm256_loadu_ps(x + 24);
        __m256 sum = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(low)), x0);
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(low, 8))), x1, sum);
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(high)), x2, sum);
        sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(high, 8))), x3, sum);
        total = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block)), sum, total);
        offsets = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block + 2)), _mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)), offsets);
    }
    return horizontal_sum(_mm256_add_ps(total, offsets));
}

/// Defines a Q4_1 × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`): per block, d · s ·
/// Σ q·v plus m · (s · Σ v), the activation block's sum that `lumen_quantize_q8` stores; blocks
/// go in pairs into two sums, each block's nibbles unpacked and its F16 fields read once for all
/// the tokens.
#define DEFINE_Q4_1_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                                   \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                      \
        const uint8_t *blocks = (const uint8_t *)row;                                                           \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                        \
        const long n = count / 32;                                                                              \
        __m256 sum0[TOKENS], sum1[TOKENS];                                                                                \
        float offset[TOKENS];                                                                                        \
        for (int t = 0; t < (TOKENS); t++) {                                                                           \
            sum0[t] = _mm256_setzero_ps();                                                                      \
            sum1[t] = _mm256_setzero_ps();                                                                      \
            offset[t] = 0.0f;                                                                                   \
        }                                                                                                       \
        long b = 0;                                                                                             \
        for (; b + 1 < n; b += 2) {                                                                             \
            const uint8_t *first = blocks + 20 * b, *second = first + 20;                                       \
            const float d0 = half_to_float(first), d1 = half_to_float(second);                                  \
            const float m0 = half_to_float(first + 2), m1 = half_to_float(second + 2);                          \
            const __m256i w0 = unpack_nibbles(first + 4, low_mask), w1 = unpack_nibbles(second + 4, low_mask);  \
            for (int t = 0; t < (TOKENS); t++) {                                                                       \
                const signed char *v = values + t * count;                                                      \
                const float *d = scales + t * n, *m = sums + 3 * t * n;                                         \
                offset[t] += m0 * m[b] + m1 * m[b + 1];                                                         \
                const __m256i a0 = _mm256_loadu_si256((const __m256i *)(v + 32 * b));                           \
                const __m256i a1 = _mm256_loadu_si256((const __m256i *)(v + 32 * (b + 1)));                     \
                sum0[t] = _mm256_fmadd_ps(_mm256_set1_ps(d0 * d[b]), _mm256_cvtepi32_ps(PRODUCTS(w0, a0)), sum0[t]); \
                sum1[t] = _mm256_fmadd_ps(_mm256_set1_ps(d1 * d[b + 1]), _mm256_cvtepi32_ps(PRODUCTS(w1, a1)), sum1[t]); \
            }                                                                                                   \
        }                                                                                                       \
        for (; b < n; b++) {                                                                                    \
            const uint8_t *block = blocks + 20 * b;                                                             \
            const float d0 = half_to_float(block), m0 = half_to_float(block + 2);                               \
            const __m256i w0 = unpack_nibbles(block + 4, low_mask);                                             \
            for (int t = 0; t < (TOKENS); t++) {                                                                       \
                offset[t] += m0 * sums[3 * t * n + b];                                                          \
                const __m256i a = _mm256_loadu_si256((const __m256i *)(values + t * count + 32 * b));            \
                sum0[t] = _mm256_fmadd_ps(_mm256_set1_ps(d0 * scales[t * n + b]), _mm256_cvtepi32_ps(PRODUCTS(w0, a)), sum0[t]); \
            }                                                                                                   \
        }                                                                                                       \
        for (int t = 0; t < (TOKENS); t++) out[t * out_stride] = horizontal_sum(_mm256_add_ps(sum0[t], sum1[t])) + offset[t]; \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q4_1_q8, DEFINE_Q4_1_Q8_KERNEL)

static void levels_q4_1(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 20, levels += 32) {
        nibble_levels(block + 4, 0, levels);
        two_groups(scales, mins, b, half_to_float(block), half_to_float(block + 2));
    }
}

// MARK: - Q5_0

static void dequantize_q5_0(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 22, out += 32) {
        const float d = half_to_float(block);
        uint32_t high;
        memcpy(&high, block + 2, 4);
        const uint8_t *nibbles = block + 6;
        for (int j = 0; j < 16; j++) {
            out[j] = (float)((int)((nibbles[j] & 0x0F) | (((high >> j) & 1) << 4)) - 16) * d;
            out[j + 16] = (float)((int)((nibbles[j] >> 4) | (((high >> (j + 16)) & 1) << 4)) - 16) * d;
        }
    }
}

DEFINE_WIDENING_DOT(dot_q5_0, dequantize_q5_0, 32, 22)

/// The fifth bits of a Q5_0 block's 32 weights (bit i of the little-endian word at `p`) as
/// bytes of 0x10 or 0: byte i copies byte i / 8 of the word and tests bit i % 8 of it.
static inline __m256i q5_0_high_bits(const uint8_t *p) {
    uint32_t bits;
    memcpy(&bits, p, 4);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

/// Defines a Q5_0 × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`): unsigned 5-bit
/// weights (nibble plus fifth bit, assembled once for all the tokens) meet the signed activations,
/// even blocks into one sum and odd into another, and the 16 · sum(activations) each block owes is
/// subtracted once, as a scalar.
#define DEFINE_Q5_0_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                       \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                      \
        const uint8_t *blocks = (const uint8_t *)row;                                                           \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                        \
        const long n = count / 32;                                                                              \
        float off0[TOKENS], off1[TOKENS];                                                                       \
        __m256 sum0[TOKENS], sum1[TOKENS];                                                                      \
        for (int t = 0; t < (TOKENS); t++) {                                                                    \
            off0[t] = off1[t] = 0.0f;                                                                           \
            sum0[t] = sum1[t] = _mm256_setzero_ps();                                                            \
        }                                                                                                       \
        for (long b = 0; b < n; b += 2) {                                                                       \
            Q5_0_TOKENS_BLOCK(b, off0, sum0, TOKENS, PRODUCTS)                                                  \
            if (b + 1 < n) { Q5_0_TOKENS_BLOCK(b + 1, off1, sum1, TOKENS, PRODUCTS) }                            \
        }                                                                                                       \
        for (int t = 0; t < (TOKENS); t++)                                                                      \
            out[t * out_stride] = horizontal_sum(_mm256_add_ps(sum0[t], sum1[t])) - 16.0f * (off0[t] + off1[t]); \
    }
/// One block of `DEFINE_Q5_0_Q8_KERNEL` into each token's `offsets` and `sums`.
#define Q5_0_TOKENS_BLOCK(index, offsets, sums_, TOKENS, PRODUCTS)                                             \
    {                                                                                                          \
        const uint8_t *block = blocks + 22 * (index);                                                          \
        const __m256i weights = _mm256_or_si256(unpack_nibbles(block + 6, low_mask), q5_0_high_bits(block + 2)); \
        const float scale = half_to_float(block);                                                              \
        for (int t = 0; t < (TOKENS); t++) {                                                                   \
            const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 32 * (index))); \
            const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(weights, activations));                        \
            offsets[t] += scale * sums[3 * t * n + (index)];                                                   \
            sums_[t] = _mm256_fmadd_ps(_mm256_set1_ps(scale * scales[t * n + (index)]), products, sums_[t]);   \
        }                                                                                                      \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q5_0_q8, DEFINE_Q5_0_Q8_KERNEL)

static void levels_q5_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 22, levels += 32) {
        const float d = half_to_float(block);
        uint32_t high;
        memcpy(&high, block + 2, 4);
        nibble_levels(block + 6, high, levels);
        two_groups(scales, mins, b, d, -16.0f * d);
    }
}

// MARK: - Q5_1

/// Q5_1 blocks (24 bytes): F16 `d`, F16 `m`, 32 fifth bits, 16 bytes of nibbles; w = d·q + m.
static void dequantize_q5_1(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 24, out += 32) {
        const float d = half_to_float(block), m = half_to_float(block + 2);
        uint32_t high;
        memcpy(&high, block + 4, 4);
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)((block[8 + j] & 0x0F) | (((high >> j) & 1) << 4)) + m;
            out[j + 16] = d * (float)((block[8 + j] >> 4) | (((high >> (j + 16)) & 1) << 4)) + m;
        }
    }
}

DEFINE_WIDENING_DOT(dot_q5_1, dequantize_q5_1, 32, 24)

/// Defines a Q5_1 × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`): unsigned 5-bit
/// weights (nibble plus fifth bit) meet each token's activations, d · s scales their products
/// (even blocks into one sum, odd into another) and m · (s · Σ v), which `sums` holds, is added.
#define DEFINE_Q5_1_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                             \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const long n = count / 32;                                                                           \
        float offset[TOKENS];                                                                                \
        __m256 sum0[TOKENS], sum1[TOKENS];                                                                   \
        for (int t = 0; t < (TOKENS); t++) {                                                                 \
            offset[t] = 0.0f;                                                                                \
            sum0[t] = sum1[t] = _mm256_setzero_ps();                                                         \
        }                                                                                                    \
        for (long b = 0; b < n; b++, block += 24) {                                                          \
            const __m256i weights = _mm256_or_si256(unpack_nibbles(block + 8, low_mask), q5_0_high_bits(block + 4)); \
            const float d = half_to_float(block), m = half_to_float(block + 2);                              \
            for (int t = 0; t < (TOKENS); t++) {                                                             \
                const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 32 * b)); \
                offset[t] += m * sums[3 * t * n + b];                                                        \
                const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(weights, activations));                  \
                const __m256 scale = _mm256_set1_ps(d * scales[t * n + b]);                                  \
                if (b & 1) sum1[t] = _mm256_fmadd_ps(scale, products, sum1[t]);                              \
                else sum0[t] = _mm256_fmadd_ps(scale, products, sum0[t]);                                    \
            }                                                                                                \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++) out[t * out_stride] = horizontal_sum(_mm256_add_ps(sum0[t], sum1[t])) + offset[t]; \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q5_1_q8, DEFINE_Q5_1_Q8_KERNEL)

static void levels_q5_1(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 24, levels += 32) {
        uint32_t high;
        memcpy(&high, block + 4, 4);
        nibble_levels(block + 8, high, levels);
        two_groups(scales, mins, b, half_to_float(block), half_to_float(block + 2));
    }
}
