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

/// IQ4_NL blocks (18 bytes): F16 `d`, 16 bytes of nibbles; w = d·value[q].
static void dequantize_iq4_nl(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, out += 32) {
        const float d = half_to_float(block);
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)lumen_iq4_values[block[2 + j] & 0x0F];
            out[j + 16] = d * (float)lumen_iq4_values[block[2 + j] >> 4];
        }
    }
}

DEFINE_WIDENING_DOT(dot_iq4_nl, dequantize_iq4_nl, 32, 18)

/// One IQ4_NL block `b`: its nibbles look their signed values up in `table`, and their products
/// times `SCALE` (weight scale × activation scale, broadcast) are added into `acc`.
#define IQ4_NL_Q8_STEP(PRODUCTS, b, acc, SCALE)                                                              \
    {                                                                                                        \
        const __m256i weights = _mm256_shuffle_epi8(table, unpack_nibbles(blocks + 18 * (b) + 2, low_mask)); \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (b)));               \
        acc = _mm256_fmadd_ps(SCALE, _mm256_cvtepi32_ps(SIGNED_PRODUCTS(PRODUCTS, weights, activations)), acc); \
    }

/// Defines an IQ4_NL × 8-bit kernel. Its blocks are laid out as Q4_0's (F16 d, 16 bytes of
/// nibbles), so four blocks per step have their scales converted and multiplied together, as in
/// the Q4_0 kernel, and each block's products go to an accumulator of their own.
#define DEFINE_IQ4_NL_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                   \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales, const float *sums, long count) { \
        (void)sums; /* IQ4 values are signed: no offset to take off. */ \
        const uint8_t *blocks = (const uint8_t *)row;                                                        \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lumen_iq4_values));     \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        __m256 sum2 = _mm256_setzero_ps(), sum3 = _mm256_setzero_ps();                                       \
        long b = 0;                                                                                          \
        for (; b + 3 < count / 32; b += 4) {                                                                 \
            const __m256 both = _mm256_castps128_ps256(_mm_mul_ps(q4_0_scales4(blocks + 18 * b), _mm_loadu_ps(scales + b))); \
            IQ4_NL_Q8_STEP(PRODUCTS, b, sum0, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(0)))          \
            IQ4_NL_Q8_STEP(PRODUCTS, b + 1, sum1, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(1)))      \
            IQ4_NL_Q8_STEP(PRODUCTS, b + 2, sum2, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(2)))      \
            IQ4_NL_Q8_STEP(PRODUCTS, b + 3, sum3, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(3)))      \
        }                                                                                                    \
        for (; b < count / 32; b++) IQ4_NL_Q8_STEP(PRODUCTS, b, sum0, _mm256_set1_ps(half_to_float(blocks + 18 * b) * scales[b])) \
        return horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum0, sum1), _mm256_add_ps(sum2, sum3)));          \
    }

DEFINE_Q8_DOT(dot_iq4_nl_q8, DEFINE_IQ4_NL_Q8_KERNEL)

static void levels_iq4_nl(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, levels += 32) {
        const float d = half_to_float(block);
        table_levels(lumen_iq4_values, block + 2, levels);
        two_groups(scales, mins, b, d, -128.0f * d);
    }
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

/// Defines an IQ4_XS × 8-bit kernel: each 32-weight sub-block is an IQ4_NL block whose scale is
/// d · (its 6-bit scale − 32); the eight combined scales of a block are computed as one vector.
#define DEFINE_IQ4_XS_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                   \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales, const float *sums, long count) { \
        (void)sums; /* IQ4 values are signed: no offset to take off. */ \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lumen_iq4_values));     \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        for (long b = 0; b < count / 256; b++, block += 136, values += 256, scales += 8) {                   \
            const unsigned high = (unsigned)(block[2] | block[3] << 8);                                      \
            float sub_scales[8];                                                                             \
            for (int sub = 0; sub < 8; sub++) {                                                              \
                const int low = (block[4 + sub / 2] >> (4 * (sub % 2))) & 0x0F;                              \
                sub_scales[sub] = (float)((low | (int)(((high >> (2 * sub)) & 3) << 4)) - 32);               \
            }                                                                                                \
            const __m256 combined = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(sub_scales), _mm256_set1_ps(half_to_float(block))), \
                                                  _mm256_loadu_ps(scales));                                  \
            for (int sub = 0; sub < 8; sub++) {                                                              \
                const __m256i weights = _mm256_shuffle_epi8(table, unpack_nibbles(block + 8 + 16 * sub, low_mask)); \
                const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * sub));        \
                const __m256 products = _mm256_cvtepi32_ps(SIGNED_PRODUCTS(PRODUCTS, weights, activations)); \
                const __m256 scale = _mm256_permutevar8x32_ps(combined, _mm256_set1_epi32(sub));             \
                if (sub & 1) sum1 = _mm256_fmadd_ps(scale, products, sum1);                                  \
                else sum0 = _mm256_fmadd_ps(scale, products, sum0);                                          \
            }                                                                                                \
        }                                                                                                    \
        return horizontal_sum(_mm256_add_ps(sum0, sum1));                                                    \
    }

DEFINE_Q8_DOT(dot_iq4_xs_q8, DEFINE_IQ4_XS_Q8_KERNEL)

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

/// MXFP4 blocks (17 bytes): an E8M0 exponent `e`, 16 bytes of nibbles; w = 2^(e−128)·value[q].
static void dequantize_mxfp4(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 17, out += 32) {
        const float d = e8m0_half(block[0]);
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)lumen_mxfp4_values[block[1 + j] & 0x0F];
            out[j + 16] = d * (float)lumen_mxfp4_values[block[1 + j] >> 4];
        }
    }
}

DEFINE_WIDENING_DOT(dot_mxfp4, dequantize_mxfp4, 32, 17)

/// One MXFP4 block `b`: its nibbles look their signed values up in `table`, and their products
/// times `SCALE` (the block's power of two × the activation scale, broadcast) are added into `acc`.
#define MXFP4_Q8_STEP(PRODUCTS, b, acc, SCALE)                                                               \
    {                                                                                                        \
        const __m256i weights = _mm256_shuffle_epi8(table, unpack_nibbles(blocks + 17 * (b) + 1, low_mask)); \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (b)));               \
        acc = _mm256_fmadd_ps(SCALE, _mm256_cvtepi32_ps(SIGNED_PRODUCTS(PRODUCTS, weights, activations)), acc); \
    }

/// Defines an MXFP4 × 8-bit kernel: IQ4_NL's with MXFP4's table and one-byte power-of-two scales;
/// four blocks a step, each into an accumulator of its own, the weights asked for ahead (as the
/// Q4_0 kernel), their four scales made and multiplied by the activations' at once.
#define DEFINE_MXFP4_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                    \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales, const float *sums, long count) { \
        (void)sums; /* MXFP4 values are signed: no offset to take off. */                                    \
        const uint8_t *blocks = (const uint8_t *)row;                                                        \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lumen_mxfp4_values)); \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        __m256 sum2 = _mm256_setzero_ps(), sum3 = _mm256_setzero_ps();                                       \
        long b = 0;                                                                                          \
        for (; b + 3 < count / 32; b += 4) {                                                                 \
            prefetch_weights_ahead(blocks + 17 * b, 4 * 17);                                                 \
            const __m128 powers = _mm_setr_ps(e8m0_half(blocks[17 * b]), e8m0_half(blocks[17 * b + 17]),     \
                                              e8m0_half(blocks[17 * b + 34]), e8m0_half(blocks[17 * b + 51])); \
            const __m256 both = _mm256_castps128_ps256(_mm_mul_ps(powers, _mm_loadu_ps(scales + b)));        \
            MXFP4_Q8_STEP(PRODUCTS, b, sum0, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(0)))           \
            MXFP4_Q8_STEP(PRODUCTS, b + 1, sum1, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(1)))       \
            MXFP4_Q8_STEP(PRODUCTS, b + 2, sum2, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(2)))       \
            MXFP4_Q8_STEP(PRODUCTS, b + 3, sum3, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(3)))       \
        }                                                                                                    \
        for (; b < count / 32; b++) MXFP4_Q8_STEP(PRODUCTS, b, sum0, _mm256_set1_ps(e8m0_half(blocks[17 * b]) * scales[b])) \
        return horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum0, sum1), _mm256_add_ps(sum2, sum3)));          \
    }

DEFINE_Q8_DOT(dot_mxfp4_q8, DEFINE_MXFP4_Q8_KERNEL)

static void levels_mxfp4(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 17, levels += 32) {
        const float d = e8m0_half(block[0]);
        table_levels(lumen_mxfp4_values, block + 1, levels);
        two_groups(scales, mins, b, d, -128.0f * d);
    }
}
