#include "Shared.h"

/// Eight int8 values at `p` as floats.
static inline __m256 int8x8_to_float(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

static float lumen_dot_q8_0(const void *row, const float *x, long count) {
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

static float lumen_dot_q4_0(const void *row, const float *x, long count) {
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

static float lumen_dot_f32(const void *row, const float *x, long count) {
    const float *w = (const float *)row;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 32 <= count; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 16), _mm256_loadu_ps(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 24), _mm256_loadu_ps(x + i + 24), a3);
    }
    for (; i + 8 <= count; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
    float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)));
    for (; i < count; i++) sum += w[i] * x[i];
    return sum;
}

/// Eight BF16 values at `p` as floats: each is the top half of an F32.
static inline __m256 bf16x8_to_float(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

static float lumen_dot_bf16(const void *row, const float *x, long count) {
    const uint16_t *w = (const uint16_t *)row;
    __m256 first = _mm256_setzero_ps(), second = _mm256_setzero_ps();
    long i = 0;
    for (; i + 16 <= count; i += 16) {
        first = _mm256_fmadd_ps(bf16x8_to_float(w + i), _mm256_loadu_ps(x + i), first);
        second = _mm256_fmadd_ps(bf16x8_to_float(w + i + 8), _mm256_loadu_ps(x + i + 8), second);
    }
    float sum = horizontal_sum(_mm256_add_ps(first, second));
    for (; i < count; i++) {
        const uint32_t bits = (uint32_t)w[i] << 16;
        float weight;
        memcpy(&weight, &bits, 4);
        sum += weight * x[i];
    }
    return sum;
}

static float lumen_dot_f16(const void *row, const float *x, long count) {
    const uint16_t *halves = (const uint16_t *)row;
    __m256 first = _mm256_setzero_ps(), second = _mm256_setzero_ps();
    long i = 0;
    for (; i + 16 <= count; i += 16) {
        first = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(halves + i))), _mm256_loadu_ps(x + i), first);
        second = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(halves + i + 8))), _mm256_loadu_ps(x + i + 8), second);
    }
    float sum = horizontal_sum(_mm256_add_ps(first, second));
    for (; i < count; i++) sum += half_to_float((const uint8_t *)(halves + i)) * x[i];
    return sum;
}

static void lumen_quantize_q8(const float *x, long count, signed char *values, float *scales, float *sums) {
    const __m256 sign_mask = _mm256_set1_ps(-0.0f);
    float *half_sums = sums + count / 32;
    for (long b = 0; b < count / 32; b++, x += 32, values += 32) {
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, v[i]));
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float max_abs = _mm_cvtss_f32(m);
        const float scale = max_abs / 127.0f;
        scales[b] = scale;
        const __m256 inverse = _mm256_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
        __m256i q[4];
        for (int i = 0; i < 4; i++) {
            q[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], inverse), _MM_ROUND_NEAREST | _MM_FROUND_NO_EXC));
        }
        __m256i packed16a = _mm256_packs_epi32(q[0], q[1]);
        __m256i packed16b = _mm256_packs_epi32(q[2], q[3]);
        __m256i packed8 = _mm256_packs_epi16(packed16a, packed16b);
        // The packs interleave 128-bit lanes; this permutation restores element order.
        packed8 = _mm256_permutevar8x32_epi32(packed8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)values, packed8);
        // Int32 lanes of four values: the low 128 bits hold values 0-15, the high 128 bits 16-31.
        const __m256i total = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), packed8), _mm256_set1_epi16(1));
        __m256i halves = _mm256_hadd_epi32(total, total);
        halves = _mm256_hadd_epi32(halves, halves);
        const int first = _mm256_cvtsi256_si32(halves), second = _mm_cvtsi128_si32(_mm256_extracti128_si256(halves, 1));
        sums[b] = scale * (float)(first + second);
        half_sums[2 * b] = scale * (float)first;
        half_sums[2 * b + 1] = scale * (float)second;
    }
}

/// Sum of products of 32 signed bytes, as 8 int32 lanes converted to float.
static inline __m256 dot_i8(__m256i a, __m256i b) {
    const __m256i abs_a = _mm256_sign_epi8(a, a);
    const __m256i signed_b = _mm256_sign_epi8(b, a);
    const __m256i pairs = _mm256_maddubs_epi16(abs_a, signed_b);
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

/// Runs `BODY(b, accumulator)` over the blocks of a row, four blocks per step into independent
/// accumulators so that consecutive multiply-adds do not wait for each other.
#define FOR_BLOCK_QUADS(count, BODY)                                          \
    __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();           \
    __m256 sum2 = _mm256_setzero_ps(), sum3 = _mm256_setzero_ps();           \
    long b = 0;                                                               \
    for (; b + 3 < (count) / 32; b += 4) {                                    \
        BODY(b, sum0);                                                        \
        BODY(b + 1, sum1);                                                    \
        BODY(b + 2, sum2);                                                    \
        BODY(b + 3, sum3);                                                    \
    }                                                                         \
    for (; b < (count) / 32; b++) { BODY(b, sum0); }                          \
    return horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum0, sum1), _mm256_add_ps(sum2, sum3)));

static float lumen_dot_q8_0_q8(const void *row, const signed char *values, const float *scales, long count) {
    const uint8_t *blocks = (const uint8_t *)row;
#define Q8_BLOCK(index, accumulator)                                                                   \
    {                                                                                                  \
        const uint8_t *block = blocks + 34 * (index);                                                  \
        const __m256i weights = _mm256_loadu_si256((const __m256i *)(block + 2));                      \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (index)));      \
        accumulator = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block) * scales[index]),            \
                                      dot_i8(weights, activations), accumulator);                      \
    }
    FOR_BLOCK_QUADS(count, Q8_BLOCK)
#undef Q8_BLOCK
}

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

/// One Q4_0 block `b` of the kernels below, its products times `SCALE` (weight scale × activation
/// scale, broadcast) added into `acc`.
#define Q4_0_Q8_STEP(PRODUCTS, b, acc, SCALE)                                                                \
    {                                                                                                        \
        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (b)));               \
        acc = _mm256_fmadd_ps(SCALE, _mm256_cvtepi32_ps(PRODUCTS(unpack_nibbles(blocks + 18 * (b) + 2, low_mask), activations)), acc); \
    }

/// Defines a Q4_0 × 8-bit kernel `NAME` whose unsigned-nibble × signed-activation products are
/// computed by `PRODUCTS(nibbles, activations)` (8 int32 lanes), compiled with `ATTRIBUTES`.
/// Weights are nibbles minus 8: the unsigned nibbles meet the signed activations directly, and the
/// 8 · scale · sum(activations) each block owes is accumulated as a vector and subtracted at the
/// end. Four blocks per step: their scales are converted and multiplied together in one vector,
/// and each block's products go to an accumulator of their own.
#define DEFINE_Q4_0_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                    \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,           \
                                 const float *sums, long count) {                                           \
        const uint8_t *blocks = (const uint8_t *)row;                                                       \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                    \
        __m128 offsets = _mm_setzero_ps();                                                                  \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                      \
        __m256 sum2 = _mm256_setzero_ps(), sum3 = _mm256_setzero_ps();                                      \
        long b = 0;                                                                                         \
        for (; b + 3 < count / 32; b += 4) {                                                                \
            prefetch_weights_ahead(blocks + 18 * b, 4 * 18);                                                \
            const __m128 weight_scales = q4_0_scales4(blocks + 18 * b);                                     \
            offsets = _mm_fmadd_ps(weight_scales, _mm_loadu_ps(sums + b), offsets);                         \
            const __m256 both = _mm256_castps128_ps256(_mm_mul_ps(weight_scales, _mm_loadu_ps(scales + b))); \
            Q4_0_Q8_STEP(PRODUCTS, b, sum0, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(0)))            \
            Q4_0_Q8_STEP(PRODUCTS, b + 1, sum1, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(1)))        \
            Q4_0_Q8_STEP(PRODUCTS, b + 2, sum2, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(2)))        \
            Q4_0_Q8_STEP(PRODUCTS, b + 3, sum3, _mm256_permutevar8x32_ps(both, _mm256_set1_epi32(3)))        \
        }                                                                                                   \
        float offset = 0.0f;                                                                                \
        for (; b < count / 32; b++) {                                                                       \
            const float scale = half_to_float(blocks + 18 * b);                                             \
            offset += scale * sums[b];                                                                      \
            Q4_0_Q8_STEP(PRODUCTS, b, sum0, _mm256_set1_ps(scale * scales[b]))                              \
        }                                                                                                   \
        offsets = _mm_add_ps(offsets, _mm_movehl_ps(offsets, offsets));                                     \
        offset += _mm_cvtss_f32(_mm_add_ss(offsets, _mm_movehdup_ps(offsets)));                             \
        return horizontal_sum(_mm256_add_ps(_mm256_add_ps(sum0, sum1), _mm256_add_ps(sum2, sum3))) - 8.0f * offset; \
    }

#define PRODUCTS_AVX2(u, s) _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1))
#define PRODUCTS_VNNI(u, s) _mm256_dpbusd_epi32(_mm256_setzero_si256(), (u), (s))

DEFINE_Q4_0_Q8_KERNEL(dot_q4_0_q8_avx2, , PRODUCTS_AVX2)

VNNI_VARIANT(DEFINE_Q4_0_Q8_KERNEL(dot_q4_0_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))

static float lumen_dot_q4_0_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q4_0_q8_vnni(row, values, scales, sums, count), dot_q4_0_q8_avx2(row, values, scales, sums, count));
}

static float dot_f32(const float *a, const float *b, long k) {
    __m256 sum = _mm256_setzero_ps();
    long i = 0;
    for (; i + 8 <= k; i += 8) sum = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), sum);
    float total = horizontal_sum(sum);
    for (; i < k; i++) total += a[i] * b[i];
    return total;
}

/// Three weight rows times four input vectors, twelve accumulators in registers.
static void tile_3x4(const float *w, long row_stride, const float *x, long k, float *out, long out_stride) {
    __m256 acc[3][4];
    for (int r = 0; r < 3; r++)
        for (int t = 0; t < 4; t++) acc[r][t] = _mm256_setzero_ps();
    long i = 0;
    for (; i + 8 <= k; i += 8) {
        const __m256 w0 = _mm256_loadu_ps(w + i), w1 = _mm256_loadu_ps(w + row_stride + i), w2 = _mm256_loadu_ps(w + 2 * row_stride + i);
        for (int t = 0; t < 4; t++) {
            const __m256 xv = _mm256_loadu_ps(x + t * k + i);
            acc[0][t] = _mm256_fmadd_ps(w0, xv, acc[0][t]);
            acc[1][t] = _mm256_fmadd_ps(w1, xv, acc[1][t]);
            acc[2][t] = _mm256_fmadd_ps(w2, xv, acc[2][t]);
        }
    }
    for (int r = 0; r < 3; r++) {
        for (int t = 0; t < 4; t++) {
            float total = horizontal_sum(acc[r][t]);
            for (long j = i; j < k; j++) total += w[r * row_stride + j] * x[t * k + j];
            out[t * out_stride + r] = total;
        }
    }
}

static void lumen_matmul_f32(const float *w, long row_stride, long rows, const float *x, long tokens, long k,
                      float *out, long out_stride) {
    // Tokens in blocks whose inputs fit in L2 (256 KiB, a multiple of the tile's four), so each row
    // tile reads them from L2 rather than streaming every token's input from L3 again.
    long block = (65536 / (k > 0 ? k : 1)) / 4 * 4;
    if (block < 4) block = 4;
    for (long first = 0; first < tokens; first += block) {
        const long count = tokens - first < block ? tokens - first : block;
        const float *xs = x + first * k;
        float *outs = out + first * out_stride;
        long r = 0;
        for (; r + 3 <= rows; r += 3) {
            long t = 0;
            for (; t + 4 <= count; t += 4) tile_3x4(w + r * row_stride, row_stride, xs + t * k, k, outs + t * out_stride + r, out_stride);
            for (; t < count; t++)
                for (long j = r; j < r + 3; j++) outs[t * out_stride + j] = dot_f32(w + j * row_stride, xs + t * k, k);
        }
        for (; r < rows; r++)
            for (long t = 0; t < count; t++) outs[t * out_stride + r] = dot_f32(w + r * row_stride, xs + t * k, k);
    }
}

static void lumen_dequantize_q8_0(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 34, out += 32) {
        const __m256 scale = _mm256_set1_ps(half_to_float(block));
        for (int i = 0; i < 4; i++)
            _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(scale, int8x8_to_float((const int8_t *)(block + 2) + 8 * i)));
    }
}

static void lumen_dequantize_q4_0(const void *row, float *out, long count) {
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

// MARK: - Q5_0 and the K-quants

/// The eight 6-bit scales and eight 6-bit mins of a Q4_K/Q5_K block's 12 packed bytes, unpacked
/// with 32-bit masks into 16 bytes (scales 0–7, then mins 0–7; `words` read as bytes): bytes 0–3
/// hold scales 0–3 and bytes 4–7 mins 0–3 in their low six bits; scales and mins 4–7 take their
/// low four bits from bytes 8–11 and their top two from the spare bits of bytes 0–7.
static inline void k_scale_words(const uint8_t *packed, uint32_t words[4]) {
    uint32_t word0, word1, word2;
    memcpy(&word0, packed, 4);
    memcpy(&word1, packed + 4, 4);
    memcpy(&word2, packed + 8, 4);
    words[0] = word0 & 0x3F3F3F3F;
    words[1] = (word2 & 0x0F0F0F0F) | ((word0 >> 2) & 0x30303030);
    words[2] = word1 & 0x3F3F3F3F;
    words[3] = ((word2 >> 4) & 0x0F0F0F0F) | ((word1 >> 2) & 0x30303030);
}

/// The scales and mins of `k_scale_words`, widened to floats.
static inline void k_scales_and_mins(const uint8_t *packed, __m256 *scales, __m256 *mins) {
    uint32_t words[4];
    k_scale_words(packed, words);
    const __m128i bytes = _mm_setr_epi32((int)words[0], (int)words[1], (int)words[2], (int)words[3]);
    *scales = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    *mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8)));
}

static void lumen_dequantize_q5_0(const void *row, float *out, long count) {
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

/// Q4_K (`high` null) or Q5_K weights of one 256-element block; `nibbles` holds 128 bytes whose
/// low and high halves are sub-blocks 2p and 2p + 1 of each 32-byte run p.
static void dequantize_k_block(const uint8_t *block, const uint8_t *high, const uint8_t *nibbles, float *out) {
    const float d = half_to_float(block), dmin = half_to_float(block + 2);
    __m256 scale_vector, min_vector;
    k_scales_and_mins(block + 4, &scale_vector, &min_vector);
    float scales[8], mins[8];
    _mm256_storeu_ps(scales, scale_vector);
    _mm256_storeu_ps(mins, min_vector);
    for (int pair = 0; pair < 4; pair++, nibbles += 32) {
        const float d1 = d * scales[2 * pair], m1 = dmin * mins[2 * pair];
        const float d2 = d * scales[2 * pair + 1], m2 = dmin * mins[2 * pair + 1];
        for (int l = 0; l < 32; l++) {
            const int extra = high ? ((high[l] >> (2 * pair)) & 1) << 4 : 0;
            *out++ = d1 * (float)((nibbles[l] & 0x0F) | extra) - m1;
        }
        for (int l = 0; l < 32; l++) {
            const int extra = high ? ((high[l] >> (2 * pair + 1)) & 1) << 4 : 0;
            *out++ = d2 * (float)((nibbles[l] >> 4) | extra) - m2;
        }
    }
}

static void lumen_dequantize_q4_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 144, out += 256) dequantize_k_block(block, NULL, block + 16, out);
}

static void lumen_dequantize_q5_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 176, out += 256) dequantize_k_block(block, block + 16, block + 48, out);
}

static void lumen_dequantize_q6_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 210) {
        const float d = half_to_float(block + 208);
        const uint8_t *low = block, *high = block + 128;
        const int8_t *scales = (const int8_t *)(block + 192);
        for (int half = 0; half < 2; half++, low += 64, high += 32, scales += 8, out += 128) {
            for (int l = 0; l < 32; l++) {
                const int sub = l / 16;
                const int q0 = (int)((low[l] & 0x0F) | (((high[l] >> 0) & 3) << 4)) - 32;
                const int q1 = (int)((low[l + 32] & 0x0F) | (((high[l] >> 2) & 3) << 4)) - 32;
                const int q2 = (int)((low[l] >> 4) | (((high[l] >> 4) & 3) << 4)) - 32;
                const int q3 = (int)((low[l + 32] >> 4) | (((high[l] >> 6) & 3) << 4)) - 32;
                out[l] = d * (float)scales[sub] * (float)q0;
                out[l + 32] = d * (float)scales[sub + 2] * (float)q1;
                out[l + 64] = d * (float)scales[sub + 4] * (float)q2;
                out[l + 96] = d * (float)scales[sub + 6] * (float)q3;
            }
        }
    }
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

DEFINE_WIDENING_DOT(lumen_dot_q5_0, lumen_dequantize_q5_0, 32, 22)
DEFINE_WIDENING_DOT(lumen_dot_q4_k, lumen_dequantize_q4_k, 256, 144)
DEFINE_WIDENING_DOT(lumen_dot_q5_k, lumen_dequantize_q5_k, 256, 176)
DEFINE_WIDENING_DOT(lumen_dot_q6_k, lumen_dequantize_q6_k, 256, 210)

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

/// Defines a Q5_0 × 8-bit kernel: unsigned 5-bit weights (nibble plus fifth bit) meet the signed
/// activations, and the 16 · sum(activations) each block owes is subtracted once, as a scalar.
#define DEFINE_Q5_0_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                     \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,            \
                                 const float *sums, long count) {                                            \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        float off0 = 0.0f, off1 = 0.0f;                                                                      \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        for (long b = 0; b < count / 32; b++, block += 22) {                                                 \
            const __m256i weights = _mm256_or_si256(unpack_nibbles(block + 6, low_mask), q5_0_high_bits(block + 2)); \
            const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * b));              \
            const float scale = half_to_float(block);                                                        \
            const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(weights, activations));                      \
            if (b & 1) {                                                                                     \
                off1 += scale * sums[b];                                                                     \
                sum1 = _mm256_fmadd_ps(_mm256_set1_ps(scale * scales[b]), products, sum1);                   \
            } else {                                                                                         \
                off0 += scale * sums[b];                                                                     \
                sum0 = _mm256_fmadd_ps(_mm256_set1_ps(scale * scales[b]), products, sum0);                   \
            }                                                                                                \
        }                                                                                                    \
        return horizontal_sum(_mm256_add_ps(sum0, sum1)) - 16.0f * (off0 + off1);                            \
    }

/// Defines a Q4_K (`HIGH` 0) or Q5_K (`HIGH` 1) × 8-bit kernel. Each 32-weight sub-block meets
/// one 32-value activation block: d · scale · activation scale times the integer products, minus
/// dmin · min · (activation scale × sum of activations), which `sums` already holds. A block's
/// eight combined scales and its eight min terms are computed as one vector each.
#define DEFINE_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, HIGH, BLOCK_BYTES, NIBBLE_OFFSET)                     \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,            \
                                 const float *sums, long count) {                                            \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2); \
        __m256 offsets = _mm256_setzero_ps();                                                                \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        for (long b = 0; b < count / 256; b++, block += (BLOCK_BYTES), values += 256, scales += 8, sums += 8) { \
            __m256 sub_scales, sub_mins;                                                                     \
            k_scales_and_mins(block + 4, &sub_scales, &sub_mins);                                            \
            const __m256 combined = _mm256_mul_ps(_mm256_mul_ps(sub_scales, _mm256_set1_ps(half_to_float(block))), \
                                                  _mm256_loadu_ps(scales));                                  \
            offsets = _mm256_fmadd_ps(_mm256_mul_ps(sub_mins, _mm256_set1_ps(half_to_float(block + 2))),      \
                                      _mm256_loadu_ps(sums), offsets);                                       \
            prefetch_weights_ahead(block, (BLOCK_BYTES));                                                     \
            const uint8_t *nibbles = block + (NIBBLE_OFFSET);                                                \
            __m256i high = HIGH ? _mm256_loadu_si256((const __m256i *)(block + 16)) : _mm256_setzero_si256(); \
            for (int pair = 0; pair < 4; pair++) {                                                           \
                const __m256i packed = _mm256_loadu_si256((const __m256i *)(nibbles + 32 * pair));           \
                __m256i low = _mm256_and_si256(packed, low_mask);                                            \
                __m256i upper = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low_mask);                    \
                if (HIGH) {                                                                                  \
                    low = _mm256_or_si256(low, _mm256_slli_epi16(_mm256_and_si256(high, one), 4));           \
                    upper = _mm256_or_si256(upper, _mm256_slli_epi16(_mm256_and_si256(high, two), 3));       \
                    high = _mm256_srli_epi16(high, 2);                                                       \
                }                                                                                            \
                const __m256i a0 = _mm256_loadu_si256((const __m256i *)(values + 64 * pair));                \
                const __m256i a1 = _mm256_loadu_si256((const __m256i *)(values + 64 * pair + 32));           \
                sum0 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(combined, _mm256_set1_epi32(2 * pair)),      \
                                       _mm256_cvtepi32_ps(PRODUCTS(low, a0)), sum0);                         \
                sum1 = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(combined, _mm256_set1_epi32(2 * pair + 1)),  \
                                       _mm256_cvtepi32_ps(PRODUCTS(upper, a1)), sum1);                       \
            }                                                                                                \
        }                                                                                                    \
        return horizontal_sum(_mm256_add_ps(sum0, sum1)) - horizontal_sum(offsets);                          \
    }

DEFINE_Q5_0_Q8_KERNEL(dot_q5_0_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_Q5_0_Q8_KERNEL(dot_q5_0_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))
DEFINE_K_Q8_KERNEL(dot_q4_k_q8_avx2, , PRODUCTS_AVX2, 0, 144, 16)
VNNI_VARIANT(DEFINE_K_Q8_KERNEL(dot_q4_k_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI, 0, 144, 16))
DEFINE_K_Q8_KERNEL(dot_q5_k_q8_avx2, , PRODUCTS_AVX2, 1, 176, 48)
VNNI_VARIANT(DEFINE_K_Q8_KERNEL(dot_q5_k_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI, 1, 176, 48))

static float lumen_dot_q5_0_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q5_0_q8_vnni(row, values, scales, sums, count), dot_q5_0_q8_avx2(row, values, scales, sums, count));
}

static float lumen_dot_q4_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q4_k_q8_vnni(row, values, scales, sums, count), dot_q4_k_q8_avx2(row, values, scales, sums, count));
}

static float lumen_dot_q5_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q5_k_q8_vnni(row, values, scales, sums, count), dot_q5_k_q8_avx2(row, values, scales, sums, count));
}

/// Defines a Q6_K × 8-bit kernel. Weights are 6-bit values u minus 32. The products of u with the
/// activations are taken in int32 lanes of four weights (lanes 0-3 are one 16-weight sub-block,
/// lanes 4-7 the next), each lane scaled by its sub-block's scale × d × the activation block's
/// scale, eight of which are computed at once; 32 · d · scale times each sub-block's activation
/// sum (`lumen_quantize_q8`'s half sums) is taken off, sixteen at a time.
#define DEFINE_Q6_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                    \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,           \
                                 const float *sums, long count) {                                           \
        const uint8_t *block = (const uint8_t *)row;                                                        \
        const float *half_sums = sums + count / 32;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(3);                   \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();       \
        for (long b = 0; b < count / 256; b++, block += 210, half_sums += 16) {                             \
            prefetch_weights_ahead(block, 210);                                                             \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 208));                                    \
            const __m128i all_scales = _mm_loadu_si128((const __m128i *)(block + 192));                     \
            offsets = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(all_scales))), \
                                      _mm256_loadu_ps(half_sums), offsets);                                 \
            offsets = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(all_scales, 8)))), \
                                      _mm256_loadu_ps(half_sums + 8), offsets);                             \
            for (int half = 0; half < 2; half++) {                                                          \
                const __m256i low0 = _mm256_loadu_si256((const __m256i *)(block + 64 * half));              \
                const __m256i low1 = _mm256_loadu_si256((const __m256i *)(block + 64 * half + 32));         \
                const __m256i high = _mm256_loadu_si256((const __m256i *)(block + 128 + 32 * half));        \
                __m256i weights[4];                                                                         \
                weights[0] = _mm256_or_si256(_mm256_and_si256(low0, low_mask), _mm256_slli_epi16(_mm256_and_si256(high, two_bits), 4)); \
                weights[1] = _mm256_or_si256(_mm256_and_si256(low1, low_mask),                              \
                                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2), two_bits), 4)); \
                weights[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), low_mask),       \
                                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 4), two_bits), 4)); \
                weights[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), low_mask),       \
                                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 6), two_bits), 4)); \
                const long first = 8 * b + 4 * half;                                                        \
                /* Sub-block scales 8·half … 8·half+7 × d × the scale of the activation block each falls in. */ \
                const __m256 activation_scales = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(scales + first)), \
                                                                          _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)); \
                const __m128i sub_scales = _mm_loadl_epi64((const __m128i *)(block + 192 + 8 * half));      \
                const __m256 combined = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sub_scales)), d), \
                                                      activation_scales);                                   \
                for (int group = 0; group < 4; group++) {                                                   \
                    const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (first + group))); \
                    const __m256i products = PRODUCTS(weights[group], activations);                             \
                    const __m256 scale = _mm256_permutevar8x32_ps(combined, _mm256_setr_epi32(2 * group, 2 * group, 2 * group, 2 * group, \
                                                                                              2 * group + 1, 2 * group + 1, 2 * group + 1, 2 * group + 1)); \
                    if (group & 1) sum1 = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(products), sum1);       \
                    else sum0 = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(products), sum0);                 \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
        return horizontal_sum(_mm256_fnmadd_ps(_mm256_set1_ps(32.0f), offsets, _mm256_add_ps(sum0, sum1)));  \
    }

DEFINE_Q6_K_Q8_KERNEL(dot_q6_k_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_Q6_K_Q8_KERNEL(dot_q6_k_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))

static float lumen_dot_q6_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q6_k_q8_vnni(row, values, scales, sums, count), dot_q6_k_q8_avx2(row, values, scales, sums, count));
}

static unsigned long long lumen_read_bytes(const void *p, long bytes) {
    const __m256i *v = (const __m256i *)p;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (long i = 0; i < bytes / 128; i++, v += 4) {
        a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(v));
        a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(v + 1));
        a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(v + 2));
        a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(v + 3));
    }
    const __m256i folded = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    return (unsigned long long)(_mm256_extract_epi64(folded, 0) ^ _mm256_extract_epi64(folded, 1) ^
                                _mm256_extract_epi64(folded, 2) ^ _mm256_extract_epi64(folded, 3));
}

// MARK: - Q4_1

/// Q4_1 blocks: F16 scale `d`, F16 minimum `m`, 16 bytes of nibbles (low: weights 0–15, high:
/// 16–31); w = d·q + m.
static void lumen_dequantize_q4_1(const void *row, float *out, long count) {
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

static float lumen_dot_q4_1(const void *row, const float *x, long count) {
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

/// Defines a Q4_1 × 8-bit kernel: per block, d · s · Σ q·v plus m · (s · Σ v), the activation
/// block's sum that `lumen_quantize_q8` stores.
#define DEFINE_Q4_1_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                    \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,           \
                                 const float *sums, long count) {                                           \
        const uint8_t *blocks = (const uint8_t *)row;                                                       \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                    \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                      \
        float offset = 0.0f;                                                                                \
        long b = 0;                                                                                         \
        for (; b + 1 < count / 32; b += 2) {                                                                \
            const uint8_t *first = blocks + 20 * b, *second = first + 20;                                   \
            offset += half_to_float(first + 2) * sums[b] + half_to_float(second + 2) * sums[b + 1];         \
            const __m256i a0 = _mm256_loadu_si256((const __m256i *)(values + 32 * b));                      \
            const __m256i a1 = _mm256_loadu_si256((const __m256i *)(values + 32 * (b + 1)));                \
            sum0 = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(first) * scales[b]),                        \
                                   _mm256_cvtepi32_ps(PRODUCTS(unpack_nibbles(first + 4, low_mask), a0)), sum0); \
            sum1 = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(second) * scales[b + 1]),                   \
                                   _mm256_cvtepi32_ps(PRODUCTS(unpack_nibbles(second + 4, low_mask), a1)), sum1); \
        }                                                                                                   \
        for (; b < count / 32; b++) {                                                                       \
            const uint8_t *block = blocks + 20 * b;                                                         \
            offset += half_to_float(block + 2) * sums[b];                                                   \
            const __m256i a = _mm256_loadu_si256((const __m256i *)(values + 32 * b));                       \
            sum0 = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(block) * scales[b]),                        \
                                   _mm256_cvtepi32_ps(PRODUCTS(unpack_nibbles(block + 4, low_mask), a)), sum0); \
        }                                                                                                   \
        return horizontal_sum(_mm256_add_ps(sum0, sum1)) + offset;                                          \
    }

DEFINE_Q4_1_Q8_KERNEL(dot_q4_1_q8_avx2, , PRODUCTS_AVX2)

VNNI_VARIANT(DEFINE_Q4_1_Q8_KERNEL(dot_q4_1_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))

static float lumen_dot_q4_1_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q4_1_q8_vnni(row, values, scales, sums, count), dot_q4_1_q8_avx2(row, values, scales, sums, count));
}

// MARK: - Q5_1, Q2_K, Q3_K, IQ4_NL, IQ4_XS: dequantization by the block definitions

/// Q5_1 blocks (24 bytes): F16 `d`, F16 `m`, 32 fifth bits, 16 bytes of nibbles; w = d·q + m.
static void lumen_dequantize_q5_1(const void *row, float *out, long count) {
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

/// Q2_K blocks (84 bytes): 16 bytes of 4-bit scales (low) and mins (high), 64 bytes of 2-bit
/// values, F16 `d` and `dmin`; w = d·scale·q − dmin·min per 16 values.
static void lumen_dequantize_q2_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 84) {
        const float d = half_to_float(block + 80), dmin = half_to_float(block + 82);
        const uint8_t *scales = block, *q = block + 16;
        int is = 0;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    const uint8_t sc = scales[is++];
                    const float dl = d * (float)(sc & 0x0F), ml = dmin * (float)(sc >> 4);
                    for (int l = 0; l < 16; l++) *out++ = dl * (float)((q[l + 16 * part] >> shift) & 3) - ml;
                }
            }
        }
    }
}

/// Q3_K blocks (110 bytes): 32 bytes of high-bit masks, 64 bytes of 2-bit values, 12 bytes
/// packing sixteen 6-bit scales, F16 `d`; w = d·(scale − 32)·(q − 4 unless the high bit is set).
static void lumen_dequantize_q3_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 110) {
        const float d = half_to_float(block + 108);
        const uint8_t *mask = block, *q = block + 32, *packed = block + 96;
        int8_t scales[16];
        for (int j = 0; j < 16; j++) {
            const int low = j < 8 ? (packed[j] & 0x0F) : (packed[j - 8] >> 4);
            const int high = (packed[8 + (j % 4)] >> (2 * (j / 4))) & 3;
            scales[j] = (int8_t)((low | (high << 4)) - 32);
        }
        int is = 0;
        uint8_t bit = 1;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, bit <<= 1) {
                for (int part = 0; part < 2; part++) {
                    const float dl = d * (float)scales[is++];
                    for (int l = 0; l < 16; l++) {
                        const int index = l + 16 * part;
                        *out++ = dl * (float)(((q[index] >> shift) & 3) - ((mask[index] & bit) ? 0 : 4));
                    }
                }
            }
        }
    }
}


/// IQ4_NL blocks (18 bytes): F16 `d`, 16 bytes of nibbles; w = d·value[q].
static void lumen_dequantize_iq4_nl(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, out += 32) {
        const float d = half_to_float(block);
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)lumen_iq4_values[block[2 + j] & 0x0F];
            out[j + 16] = d * (float)lumen_iq4_values[block[2 + j] >> 4];
        }
    }
}

/// IQ4_XS blocks (136 bytes for 256 weights): F16 `d`, the high 2 bits of eight 6-bit scales,
/// their low 4 bits, 128 bytes of nibbles; sub-block j has w = d·(scale_j − 32)·value[q].
static void lumen_dequantize_iq4_xs(const void *row, float *out, long count) {
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

/// A row of any format with a dequantization kernel · F32 `x`: one block at a time widened on the
/// stack, then a fused multiply–add dot.
static float lumen_dot_by_dequantizing(void (*dequantize)(const void *, float *, long), long block_size, long block_bytes,
                                const void *row, const float *x, long count) {
    float widened[256];
    __m256 total = _mm256_setzero_ps();
    const uint8_t *block = (const uint8_t *)row;
    for (long start = 0; start < count; start += block_size, block += block_bytes) {
        dequantize(block, widened, block_size);
        for (long i = 0; i < block_size; i += 8) {
            total = _mm256_fmadd_ps(_mm256_loadu_ps(widened + i), _mm256_loadu_ps(x + start + i), total);
        }
    }
    return horizontal_sum(total);
}

// MARK: - Q5_1, Q2_K, Q3_K, IQ4_NL, IQ4_XS: integer products with 8-bit activations

/// Products of signed weights `w` with signed activations `a` through an unsigned × signed
/// `PRODUCTS`: |w| meets `a` carrying `w`'s sign (no IQ4 value is −128, so |w| fits a byte).
#define SIGNED_PRODUCTS(PRODUCTS, w, a) PRODUCTS(_mm256_sign_epi8((w), (w)), _mm256_sign_epi8((a), (w)))

/// `v`'s lanes 2j (lanes 0–3) and 2j + 1 (lanes 4–7): the scales of the two 16-weight
/// sub-blocks that one 32-value activation block `j` covers.
static inline __m256 sub_block_pair(__m256 v, int j) {
    return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(2 * j, 2 * j, 2 * j, 2 * j, 2 * j + 1, 2 * j + 1, 2 * j + 1, 2 * j + 1));
}

/// Defines a Q5_1 × 8-bit kernel: unsigned 5-bit weights (nibble plus fifth bit) meet the
/// activations, d · s scales their products and m · (s · Σ v), which `sums` holds, is added.
#define DEFINE_Q5_1_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                     \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,            \
                                 const float *sums, long count) {                                            \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        float offset = 0.0f;                                                                                 \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();                                       \
        for (long b = 0; b < count / 32; b++, block += 24) {                                                 \
            const __m256i weights = _mm256_or_si256(unpack_nibbles(block + 8, low_mask), q5_0_high_bits(block + 4)); \
            const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * b));              \
            offset += half_to_float(block + 2) * sums[b];                                                    \
            const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(weights, activations));                      \
            const __m256 scale = _mm256_set1_ps(half_to_float(block) * scales[b]);                           \
            if (b & 1) sum1 = _mm256_fmadd_ps(scale, products, sum1);                                        \
            else sum0 = _mm256_fmadd_ps(scale, products, sum0);                                              \
        }                                                                                                    \
        return horizontal_sum(_mm256_add_ps(sum0, sum1)) + offset;                                           \
    }

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
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales, long count) { \
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

/// Defines an IQ4_XS × 8-bit kernel: each 32-weight sub-block is an IQ4_NL block whose scale is
/// d · (its 6-bit scale − 32); the eight combined scales of a block are computed as one vector.
#define DEFINE_IQ4_XS_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                   \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales, long count) { \
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

/// The activation scales of 32-value blocks `first` to `first + 3`, each in the two lanes of
/// the 16-weight sub-blocks it covers.
static inline __m256 activation_scales_by_sub_block(const float *scales) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(scales)), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

/// Defines a Q2_K × 8-bit kernel. Activation block j (of 32) meets the 2-bit values at shift 2·(j
/// mod 4) of the 32 bytes of half j / 4; products come in int32 lanes of four weights, lanes 0–3
/// in one 16-weight sub-block and 4–7 in the next, so each lane takes its sub-block's d · scale ×
/// the activation scale. The dmin · min each sub-block owes meets the activations' 16-value sums
/// (`lumen_quantize_q8`'s half sums), sixteen at a time.
#define DEFINE_Q2_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                     \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,            \
                                 const float *sums, long count) {                                            \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const float *half_sums = sums + count / 32;                                                          \
        const __m256i two_bits = _mm256_set1_epi8(3);                                                        \
        const __m256i nibble_mask = _mm256_set1_epi32(0x0F);                                                 \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();        \
        for (long b = 0; b < count / 256; b++, block += 84, values += 256, scales += 8, half_sums += 16) {   \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 80)), dmin = _mm256_set1_ps(half_to_float(block + 82)); \
            const __m256i packed0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)block));          \
            const __m256i packed1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(block + 8)));    \
            const __m256 mins = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(packed0, 4)), _mm256_loadu_ps(half_sums), \
                                                _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(packed1, 4)), _mm256_loadu_ps(half_sums + 8))); \
            offsets = _mm256_fmadd_ps(dmin, mins, offsets);                                                  \
            for (int half = 0; half < 2; half++) {                                                           \
                const __m256i packed = half ? packed1 : packed0;                                             \
                const __m256 combined = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_and_si256(packed, nibble_mask))), \
                                                      activation_scales_by_sub_block(scales + 4 * half));    \
                const __m256i bits = _mm256_loadu_si256((const __m256i *)(block + 16 + 32 * half));          \
                for (int shift = 0; shift < 4; shift++) {                                                    \
                    const __m256i q = _mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * shift)), two_bits);        \
                    const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * (4 * half + shift))); \
                    const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(q, activations));                    \
                    if (shift & 1) sum1 = _mm256_fmadd_ps(sub_block_pair(combined, shift), products, sum1);  \
                    else sum0 = _mm256_fmadd_ps(sub_block_pair(combined, shift), products, sum0);            \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        return horizontal_sum(_mm256_sub_ps(_mm256_add_ps(sum0, sum1), offsets));                            \
    }

/// The sixteen signed 6-bit scales of a Q3_K block's 12 packed bytes, as two vectors of floats
/// (scales 0–7 and 8–15): low four bits from the nibbles of bytes 0–7 (low nibbles first), top
/// two bits from bytes 8–11, two bits per scale at shift 2·(j / 4) of byte 8 + j mod 4.
static inline void q3_k_scales(const uint8_t *packed, __m256 *first, __m256 *second) {
    uint64_t low;
    uint32_t high;
    memcpy(&low, packed, 8);
    memcpy(&high, packed + 8, 4);
    const uint64_t top0 = (uint64_t)(high & 0x03030303) | (uint64_t)((high >> 2) & 0x03030303) << 32;
    const uint64_t top1 = (uint64_t)((high >> 4) & 0x03030303) | (uint64_t)((high >> 6) & 0x03030303) << 32;
    const __m128i bytes = _mm_sub_epi8(_mm_set_epi64x((long long)(((low >> 4) & 0x0F0F0F0F0F0F0F0FULL) | top1 << 4),
                                                      (long long)((low & 0x0F0F0F0F0F0F0F0FULL) | top0 << 4)),
                                       _mm_set1_epi8(32));
    *first = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
    *second = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
}

/// Defines a Q3_K × 8-bit kernel. The unsigned 3-bit value u = q + 4 · high bit meets the
/// activations in int32 lanes of four weights, scaled as in Q2_K by d · (scale − 32) × the
/// activation scale of their sub-block; weights are u − 4, so 4 · d · (scale − 32) times each
/// sub-block's activation sum (`lumen_quantize_q8`'s half sums) is taken off, sixteen at a time.
#define DEFINE_Q3_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS)                                                     \
    ATTRIBUTES static float NAME(const void *row, const signed char *values, const float *scales,            \
                                 const float *sums, long count) {                                            \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const float *half_sums = sums + count / 32;                                                          \
        const __m256i two_bits = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);                           \
        __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();        \
        for (long b = 0; b < count / 256; b++, block += 110, values += 256, scales += 8, half_sums += 16) {  \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 108));                                     \
            __m256 sub_scales[2];                                                                            \
            q3_k_scales(block + 96, &sub_scales[0], &sub_scales[1]);                                         \
            sub_scales[0] = _mm256_mul_ps(d, sub_scales[0]);                                                 \
            sub_scales[1] = _mm256_mul_ps(d, sub_scales[1]);                                                 \
            offsets = _mm256_fmadd_ps(sub_scales[0], _mm256_loadu_ps(half_sums),                             \
                                      _mm256_fmadd_ps(sub_scales[1], _mm256_loadu_ps(half_sums + 8), offsets)); \
            const __m256i high_bits = _mm256_loadu_si256((const __m256i *)block);                            \
            for (int half = 0; half < 2; half++) {                                                           \
                const __m256 combined = _mm256_mul_ps(sub_scales[half], activation_scales_by_sub_block(scales + 4 * half)); \
                const __m256i bits = _mm256_loadu_si256((const __m256i *)(block + 32 + 32 * half));          \
                for (int shift = 0; shift < 4; shift++) {                                                    \
                    const int j = 4 * half + shift;                                                          \
                    const __m256i bit = _mm256_set1_epi8((char)(1 << j));                                    \
                    const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), four); \
                    const __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * shift)), two_bits), high); \
                    const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + 32 * j));      \
                    const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(u, activations));                    \
                    if (shift & 1) sum1 = _mm256_fmadd_ps(sub_block_pair(combined, shift), products, sum1);  \
                    else sum0 = _mm256_fmadd_ps(sub_block_pair(combined, shift), products, sum0);            \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        return horizontal_sum(_mm256_fnmadd_ps(_mm256_set1_ps(4.0f), offsets, _mm256_add_ps(sum0, sum1)));     \
    }

DEFINE_Q5_1_Q8_KERNEL(dot_q5_1_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_Q5_1_Q8_KERNEL(dot_q5_1_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))
DEFINE_IQ4_NL_Q8_KERNEL(dot_iq4_nl_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_IQ4_NL_Q8_KERNEL(dot_iq4_nl_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))
DEFINE_IQ4_XS_Q8_KERNEL(dot_iq4_xs_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_IQ4_XS_Q8_KERNEL(dot_iq4_xs_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))
DEFINE_Q2_K_Q8_KERNEL(dot_q2_k_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_Q2_K_Q8_KERNEL(dot_q2_k_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))
DEFINE_Q3_K_Q8_KERNEL(dot_q3_k_q8_avx2, , PRODUCTS_AVX2)
VNNI_VARIANT(DEFINE_Q3_K_Q8_KERNEL(dot_q3_k_q8_vnni, VNNI_TARGET, PRODUCTS_VNNI))

static float lumen_dot_q5_1_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q5_1_q8_vnni(row, values, scales, sums, count), dot_q5_1_q8_avx2(row, values, scales, sums, count));
}

static float lumen_dot_iq4_nl_q8(const void *row, const signed char *values, const float *scales, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_iq4_nl_q8_vnni(row, values, scales, count), dot_iq4_nl_q8_avx2(row, values, scales, count));
}

static float lumen_dot_iq4_xs_q8(const void *row, const signed char *values, const float *scales, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_iq4_xs_q8_vnni(row, values, scales, count), dot_iq4_xs_q8_avx2(row, values, scales, count));
}

static float lumen_dot_q2_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q2_k_q8_vnni(row, values, scales, sums, count), dot_q2_k_q8_avx2(row, values, scales, sums, count));
}

static float lumen_dot_q3_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni) {
    return CHOOSE_VNNI(without_vnni, dot_q3_k_q8_vnni(row, values, scales, sums, count), dot_q3_k_q8_avx2(row, values, scales, sums, count));
}
