#include <math.h>

#include "CKernels.h"
#include "Shared.h"

// One query head's attention over the cache, for F32 and F16 caches alike: the cache layout is
// `[position][stride]` with the head's `dim` values at the pointer given; only the loads differ.

static inline __m256 load_f32(const void *base, long index) { return _mm256_loadu_ps((const float *)base + index); }
static inline __m256 load_f16(const void *base, long index) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)base + index)));
}
static inline float horizontal_sum8(__m256 v) {
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    return _mm_cvtss_f32(_mm_add_ss(half, _mm_movehdup_ps(half)));
}
static inline float scalar_f32(const void *base, long index) { return ((const float *)base)[index]; }
static inline float scalar_f16(const void *base, long index) { return _cvtsh_ss(((const uint16_t *)base)[index]); }

/// Defines `lumen_attend_<NAME>`: scores of the query against each cached key (`dim` values,
/// eight at a time), the softmax (`expf`, as the F32 reference does), and the weighted sum of the
/// cached values, 64 output values at a time in registers over every position (then the remaining
/// whole vectors together).
#define DEFINE_ATTEND(NAME, ELEMENT, LOAD, SCALAR)                                                        \
    void lumen_attend_##NAME(const void *keys, const void *values, long stride, const float *query, long dim, \
                             long first, long length, float scale, float *scores, float *out) {           \
        const ELEMENT *k = (const ELEMENT *)keys, *v = (const ELEMENT *)values;                           \
        float maximum = -INFINITY;                                                                        \
        long p = first;                                                                                   \
        /* Four positions at a time: independent sums, each query load shared. */                        \
        for (; p + 4 <= length && dim % 8 == 0; p += 4) {                                                 \
            __m256 sum[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()}; \
            for (long i = 0; i < dim; i += 8) {                                                           \
                const __m256 q = _mm256_loadu_ps(query + i);                                              \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 4; j++) sum[j] = _mm256_fmadd_ps(LOAD(k + (p + j) * stride, i), q, sum[j]); \
            }                                                                                             \
            for (int j = 0; j < 4; j++) {                                                                 \
                scores[p + j] = horizontal_sum8(sum[j]) * scale;                                          \
                if (scores[p + j] > maximum) maximum = scores[p + j];                                     \
            }                                                                                             \
        }                                                                                                 \
        for (; p < length; p++) {                                                                         \
            __m256 sum = _mm256_setzero_ps();                                                             \
            long i = 0;                                                                                   \
            for (; i + 8 <= dim; i += 8) sum = _mm256_fmadd_ps(LOAD(k + p * stride, i), _mm256_loadu_ps(query + i), sum); \
            float score = horizontal_sum8(sum);                                                           \
            for (; i < dim; i++) score += SCALAR(k + p * stride, i) * query[i];                           \
            scores[p] = score * scale;                                                                    \
            if (scores[p] > maximum) maximum = scores[p];                                                 \
        }                                                                                                 \
        float total = 0;                                                                                  \
        for (long p = first; p < length; p++) {                                                           \
            scores[p] = expf(scores[p] - maximum);                                                        \
            total += scores[p];                                                                           \
        }                                                                                                 \
        const float inverse = 1.0f / total;                                                               \
        long d = 0;                                                                                       \
        for (; d + 64 <= dim; d += 64) {                                                                  \
            __m256 acc[8];                                                                                \
            for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();                                     \
            for (long p = first; p < length; p++) {                                                       \
                const __m256 weight = _mm256_set1_ps(scores[p]);                                          \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 8; j++) acc[j] = _mm256_fmadd_ps(weight, LOAD(v + p * stride, d + 8 * j), acc[j]); \
            }                                                                                             \
            for (int j = 0; j < 8; j++) _mm256_storeu_ps(out + d + 8 * j, _mm256_mul_ps(acc[j], _mm256_set1_ps(inverse))); \
        }                                                                                                 \
        /* The last whole vectors (a head of 48 or 72) in one pass too, not one pass each. */           \
        const long rest = (dim - d) / 8;                                                                  \
        if (rest > 0) {                                                                                   \
            __m256 acc[7];                                                                                \
            for (int j = 0; j < 7; j++) acc[j] = _mm256_setzero_ps();                                     \
            for (long p = first; p < length; p++) {                                                       \
                const __m256 weight = _mm256_set1_ps(scores[p]);                                          \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 7; j++)                                                               \
                    if (j < rest) acc[j] = _mm256_fmadd_ps(weight, LOAD(v + p * stride, d + 8 * j), acc[j]); \
            }                                                                                             \
            for (int j = 0; j < rest; j++) _mm256_storeu_ps(out + d + 8 * j, _mm256_mul_ps(acc[j], _mm256_set1_ps(inverse))); \
            d += 8 * rest;                                                                                \
        }                                                                                                 \
        for (; d < dim; d++) {                                                                            \
            float sum = 0;                                                                                \
            for (long p = first; p < length; p++) sum += scores[p] * SCALAR(v + p * stride, d);           \
            out[d] = sum * inverse;                                                                       \
        }                                                                                                 \
    }

DEFINE_ATTEND(f32, float, load_f32, scalar_f32)
DEFINE_ATTEND(f16, uint16_t, load_f16, scalar_f16)

void lumen_store_f32(const float *x, void *out, long count) { memcpy(out, x, (size_t)count * sizeof(float)); }

void lumen_store_f16(const float *x, void *out, long count) {
    uint16_t *halves = (uint16_t *)out;
    long i = 0;
    for (; i + 8 <= count; i += 8)
        _mm_storeu_si128((__m128i *)(halves + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < count; i++) halves[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}
