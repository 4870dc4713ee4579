// The non-linear 4-bit formats, whose nibbles index a table of 16 values: IQ4_NL (blocks of 32),
// IQ4_XS (blocks of 256 with 6-bit sub-block scales) and MXFP4 (blocks of 32 FP4 numbers with a
// power-of-two scale: gpt-oss's experts). Each has a dequantization, an F32 dot product, a dot
// product with 8-bit activations and a levels decoder; its row in Formats.c names them.

#include "Blocks.h"

/// Products of signed weights `w` with signed activations `a` through an unsigned × signed
/// `PRODUCTS`: |w| meets `a` carrying `w`'s sign (no IQ4 value is −128, so |w| fits a byte).
#define SIGNED_PRODUCTS(PRODUCTS, w, a) PRODUCTS(_mm256_sign_epi8((w), (w)), _mm256_sign_epi8((a), (w)))

/// Nibbles indexing `values`: sub-block values 0–15 (low) and 16–31 (high) of `nibbles`, shifted by 128.
static inline void table_levels(const int8_t *values, const uint8_t *nibbles, uint8_t *levels) {
    const __m128i table = _mm_add_epi8(_mm_loadu_si128((const __m128i *)values), _mm_set1_epi8((char)0x80));
    const __m128i packed = _mm_loadu_si128((const __m128i *)nibbles), mask = _mm_set1_epi8(0x0F);
    _mm_storeu_si128((__m128i *)levels, _mm_shuffle_epi8(table, _mm_and_si128(packed, mask)));
    _mm_storeu_si128((__m128i *)(levels + 16), _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(packed, 4), mask)));
}

// MARK: - IQ4_NL

/// Blocks of 32 weights, `BYTES` bytes each: a scale field that `SCALE(block)` reads, then 16
/// bytes of nibbles (weights 0–15 low, 16–31 high) indexing `VALUES`; w = scale·value[q].
#define DEQUANTIZE_TABLE_BLOCKS(row, out, count, BYTES, SCALE, VALUES)                       \
    {                                                                                        \
        const uint8_t *block = (const uint8_t *)(row);                                       \
        for (long b = 0; b < (count) / 32; b++, block += (BYTES), (out) += 32) {             \
            const float d = SCALE(block);                                                    \
            const uint8_t *nibbles = block + (BYTES) - 16;                                   \
            for (int j = 0; j < 16; j++) {                                                   \
                (out)[j] = d * (float)(VALUES)[nibbles[j] & 0x0F];                            \
                (out)[j + 16] = d * (float)(VALUES)[nibbles[j] >> 4];                         \
            }                                                                                \
        }                                                                                    \
    }

/// IQ4_NL blocks (18 bytes): F16 `d`, 16 bytes of nibbles; w = d·value[q].
static void dequantize_iq4_nl(const void *row, float *out, long count) {
    DEQUANTIZE_TABLE_BLOCKS(row, out, count, 18, half_to_float, lumen_iq4_values)
}

DEFINE_WIDENING_DOT(dot_iq4_nl, dequantize_iq4_nl, 32, 18)

/// Block `b`'s nibbles (the last 16 of its `BYTES` bytes) looked up in `table`: its signed values.
#define TABLE_WEIGHTS(BYTES, b) _mm256_shuffle_epi8(table, unpack_nibbles(blocks + (BYTES) * (b) + (BYTES) - 16, low_mask))

/// `weights` (block `b`'s) times token `t`'s activations, times `SCALE` (weight scale × activation
/// scale, broadcast), added into `acc`.
#define TABLE_Q8_STEP(PRODUCTS, weights, t, b, acc, SCALE)                                                   \
    {                                                                                                        \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + (t) * count + 32 * (b))); \
        acc = _mm256_fmadd_ps(SCALE, _mm256_cvtepi32_ps(SIGNED_PRODUCTS(PRODUCTS, (weights), activations)), acc); \
    }

/// Defines a × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`) for blocks of 32
/// nibbles indexing `VALUES` (IQ4_NL, MXFP4): `BYTES` bytes a block, whose scale `SCALE(block)`
/// reads and `SCALES4(block)` reads for four blocks in a row. Four blocks a step, their weights
/// looked up once for all the tokens, each block into an accumulator of its own, the weights asked
/// for ahead (as the Q4_0 kernel), the four scales multiplied by each token's at once.
#define DEFINE_TABLE_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, BYTES, SCALE, SCALES4, VALUES)            \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        (void)sums; /* The values are signed: no offset to take off. */                                     \
        const uint8_t *blocks = (const uint8_t *)row;                                                        \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(VALUES)));      \
        const long n = count / 32;                                                                           \
        __m256 sum[TOKENS][4];                                                                               \
        for (int t = 0; t < (TOKENS); t++)                                                                   \
            for (int i = 0; i < 4; i++) sum[t][i] = _mm256_setzero_ps();                                     \
        long b = 0;                                                                                          \
        for (; b + 3 < n; b += 4) {                                                                          \
            prefetch_weights_ahead(blocks + (BYTES) * b, 4 * (BYTES));                                       \
            const __m128 weight_scales = SCALES4(blocks + (BYTES) * b);                                      \
            const __m256i w0 = TABLE_WEIGHTS(BYTES, b), w1 = TABLE_WEIGHTS(BYTES, b + 1);                    \
            const __m256i w2 = TABLE_WEIGHTS(BYTES, b + 2), w3 = TABLE_WEIGHTS(BYTES, b + 3);                \
            for (int t = 0; t < (TOKENS); t++) {                                                             \
                const __m256 both = _mm256_castps128_ps256(_mm_mul_ps(weight_scales, _mm_loadu_ps(scales + t * n + b))); \
                TABLE_Q8_STEP(PRODUCTS, w0, t, b, sum[t][0], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(0))) \
                TABLE_Q8_STEP(PRODUCTS, w1, t, b + 1, sum[t][1], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(1))) \
                TABLE_Q8_STEP(PRODUCTS, w2, t, b + 2, sum[t][2], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(2))) \
                TABLE_Q8_STEP(PRODUCTS, w3, t, b + 3, sum[t][3], _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(3))) \
            }                                                                                                \
        }                                                                                                    \
        for (; b < n; b++) {                                                                                 \
            const __m256i w = TABLE_WEIGHTS(BYTES, b);                                                       \
            const float weight_scale = SCALE(blocks + (BYTES) * b);                                          \
            for (int t = 0; t < (TOKENS); t++)                                                               \
                TABLE_Q8_STEP(PRODUCTS, w, t, b, sum[t][0], _mm256_set1_ps(weight_scale * scales[t * n + b])) \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++)                                                                   \
            out[t * out_stride] = horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum[t][0], sum[t][1]), _mm256_add_ps(sum[t][2], sum[t][3]))); \
    }

/// IQ4_NL's blocks are laid out as Q4_0's (F16 d, 16 bytes of nibbles).
#define DEFINE_IQ4_NL_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS) \
    DEFINE_TABLE_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, 18, half_to_float, q4_0_scales4, lumen_iq4_values)

DEFINE_Q8_DOT_AND_TOKENS(dot_iq4_nl_q8, DEFINE_IQ4_NL_Q8_KERNEL)

/// The levels of blocks laid out as `DEQUANTIZE_TABLE_BLOCKS` reads them: each value shifted by
/// 128, so each block's min is −128 · its scale.
#define TABLE_LEVELS(row, levels, scales, mins, count, BYTES, SCALE, VALUES)                      \
    {                                                                                            \
        const uint8_t *block = (const uint8_t *)(row);                                           \
        for (long b = 0; b < (count) / 32; b++, block += (BYTES), (levels) += 32) {              \
            const float d = SCALE(block);                                                        \
            table_levels((VALUES), block + (BYTES) - 16, (levels));                              \
            two_groups((scales), (mins), b, d, -128.0f * d);                                     \
        }                                                                                        \
    }

static void levels_iq4_nl(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    TABLE_LEVELS(row, levels, scales, mins, count, 18, half_to_float, lumen_iq4_values)
}

// MARK: - IQ4_XS

/// IQ4_XS blocks (136 bytes for 256 weights): F16 `d`, the high 2 bits of eight 6-bit scales,
/// their low 4 bits, 128 bytes of nibbles; sub-block j has w = d·(scale_j − 32)·value[q].
static void dequantize_iq4_xs(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 136) {
        const float d = half_to_float(block);
        const uint16_t high = (uint16_t)(block[2] | block[3] << 8);
        const uint8_t *low = block + 4, *q = block + 8;
        for (int sub = 0; sub < 8; sub++, q += 16, out += 32) {
            const int scale = ((low[sub / 2] >> (4 * (sub % 2))) & 0x0F) | (((high >> (2 * sub)) & 3) << 4);
            const float dl = d * (float)(scale - 32);
            for (int j = 0; j < 16; j++) {
                out[j] = dl * (float)lumen_iq4_values[q[j] & 0x0F];
                out[j + 16] = dl * (float)lumen_iq4_values[q[j] >> 4];
            }
        }
    }
}

DEFINE_WIDENING_DOT(dot_iq4_xs, dequantize_iq4_xs, 256, 136)

/// Defines an IQ4_XS × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`): each 32-weight
/// sub-block is an IQ4_NL block whose scale is d · (its 6-bit scale − 32), its weights looked up
/// once for all the tokens; a block's eight combined scales are one vector per token.
#define DEFINE_IQ4_XS_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                           \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        (void)sums; /* IQ4 values are signed: no offset to take off. */                                     \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lumen_iq4_values)); \
        const long n = count / 32;                                                                           \
        __m256 sum0[TOKENS], sum1[TOKENS];                                                                   \
        for (int t = 0; t < (TOKENS); t++) sum0[t] = sum1[t] = _mm256_setzero_ps();                          \
        for (long b = 0; b < n / 8; b++, block += 136) {                                                     \
            const unsigned high = (unsigned)(block[2] | block[3] << 8);                                      \
            float sub_scales[8];                                                                             \
            for (int sub = 0; sub < 8; sub++) {                                                              \
                const int low = (block[4 + sub / 2] >> (4 * (sub % 2))) & 0x0F;                              \
                sub_scales[sub] = (float)((low | (int)(((high >> (2 * sub)) & 3) << 4)) - 32);               \
            }                                                                                                \
            const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(sub_scales), _mm256_set1_ps(half_to_float(block))); \
            __m256 combined[TOKENS];                                                                         \
            for (int t = 0; t < (TOKENS); t++) combined[t] = _mm256_mul_ps(scaled, _mm256_loadu_ps(scales + t * n + 8 * b)); \
            for (int sub = 0; sub < 8; sub++) {                                                              \
                const __m256i weights = _mm256_shuffle_epi8(table, unpack_nibbles(block + 8 + 16 * sub, low_mask)); \
                for (int t = 0; t < (TOKENS); t++) {                                                         \
                    const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 256 * b + 32 * sub)); \
                    const __m256 products = _mm256_cvtepi32_ps(SIGNED_PRODUCTS(PRODUCTS, weights, activations)); \
                    const __m256 scale = _mm256_permutevar8x32_ps(combined[t], _mm256_set1_epi32(sub));      \
                    if (sub & 1) sum1[t] = _mm256_fmadd_ps(scale, products, sum1[t]);                        \
                    else sum0[t] = _mm256_fmadd_ps(scale, products, sum0[t]);                                \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++) out[t * out_stride] = horizontal_sum(_mm256_add_ps(sum0[t], sum1[t])); \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_iq4_xs_q8, DEFINE_IQ4_XS_Q8_KERNEL)

static void levels_iq4_xs(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 136, scales += 16, mins += 16) {
        const float d = half_to_float(block);
        const uint16_t high = (uint16_t)(block[2] | block[3] << 8);
        for (int sub = 0; sub < 8; sub++, levels += 32) {
            const int scale = ((block[4 + sub / 2] >> (4 * (sub % 2))) & 0x0F) | (((high >> (2 * sub)) & 3) << 4);
            const float dl = d * (float)(scale - 32);
            table_levels(lumen_iq4_values, block + 8 + 16 * sub, levels);
            two_groups(scales, mins, sub, dl, -128.0f * dl);
        }
    }
}

// MARK: - MXFP4

/// An E8M0 scale (a bare exponent, bias 127) halved, as ggml's `GGML_E8M0_TO_FP32_HALF`: the
/// factor of MXFP4's doubled values. Exponents 0 and 1 give the subnormals 2^−128 and 2^−127.
static inline float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float value;
    memcpy(&value, &bits, 4);
    return value;
}

/// The block at `block`'s E8M0 scale, halved (`e8m0_half`), and those of four blocks in a row.
static inline float mxfp4_scale(const uint8_t *block) { return e8m0_half(block[0]); }
static inline __m128 mxfp4_scales4(const uint8_t *block) {
    return _mm_setr_ps(e8m0_half(block[0]), e8m0_half(block[17]), e8m0_half(block[34]), e8m0_half(block[51]));
}

/// MXFP4 blocks (17 bytes): an E8M0 exponent `e`, 16 bytes of nibbles; w = 2^(e−128)·value[q].
static void dequantize_mxfp4(const void *row, float *out, long count) {
    DEQUANTIZE_TABLE_BLOCKS(row, out, count, 17, mxfp4_scale, lumen_mxfp4_values)
}

DEFINE_WIDENING_DOT(dot_mxfp4, dequantize_mxfp4, 32, 17)

#define DEFINE_MXFP4_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS) \
    DEFINE_TABLE_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, 17, mxfp4_scale, mxfp4_scales4, lumen_mxfp4_values)

DEFINE_Q8_DOT_AND_TOKENS(dot_mxfp4_q8, DEFINE_MXFP4_Q8_KERNEL)

static void levels_mxfp4(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    TABLE_LEVELS(row, levels, scales, mins, count, 17, mxfp4_scale, lumen_mxfp4_values)
}
