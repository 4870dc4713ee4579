// The float formats F32, F16 and BF16 (a dequantization and an F32 dot product each; their
// rows in Formats.c), and the F32 matrix–matrix product.

#include "Shared.h"

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

static float dot_bf16(const void *row, const float *x, long count) {
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

static float dot_f16(const void *row, const float *x, long count) {
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

/// A format's `add_scaled_dots` from its `dot`: the product a statement of its own, so that the
/// compiler does not fuse it with the sum (the rows stay `dot`, times `factor`, plus `out`).
#define ADD_SCALED_DOTS(name, dot)                                                                                     \
    static void name(const void *rows, long row_bytes, long row_count, const float *x, long count, float factor,     \
                     float *out) {                                                                                     \
        for (long r = 0; r < row_count; r++) {                                                                         \
            const float product = dot((const char *)rows + r * row_bytes, x, count) * factor;                           \
            out[r] += product;                                                                                         \
        }                                                                                                              \
    }

ADD_SCALED_DOTS(add_scaled_dots_f32, lumen_dot_f32)
ADD_SCALED_DOTS(add_scaled_dots_f16, dot_f16)
ADD_SCALED_DOTS(add_scaled_dots_bf16, dot_bf16)

static void dequantize_f32(const void *row, float *out, long count) { memcpy(out, row, (size_t)count * sizeof(float)); }

static void dequantize_f16(const void *row, float *out, long count) {
    const uint16_t *halves = (const uint16_t *)row;
    long i = 0;
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(halves + i))));
    for (; i < count; i++) out[i] = half_bits_to_float(halves[i]);
}

static void dequantize_bf16(const void *row, float *out, long count) {
    const uint16_t *w = (const uint16_t *)row;
    long i = 0;
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, bf16x8_to_float(w + i));
    for (; i < count; i++) {
        const uint32_t bits = (uint32_t)w[i] << 16;
        memcpy(out + i, &bits, 4);
    }
}

// MARK: - The F32 matrix–matrix product

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
