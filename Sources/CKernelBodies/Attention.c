#include <math.h>

#include "Shared.h"

// One query head's attention over the cache, for F32, F16 and Q8_0 caches alike: the cache layout
// is `[position][stride]` with the head's `dim` values at the pointer given, `stride` counted in the
// cache's units (an element; a Q8_0 cache's 32-value block); only the loads differ.

static inline __m256 load_f32(const void *base, long index) { return _mm256_loadu_ps((const float *)base + index); }
static inline __m256 load_f16(const void *base, long index) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)base + index)));
}
static inline float scalar_f32(const void *base, long index) { return ((const float *)base)[index]; }
static inline float scalar_f16(const void *base, long index) { return half_bits_to_float(((const uint16_t *)base)[index]); }

/// A Q8_0 cache's unit, as ggml's `block_q8_0`: an F16 scale and 32 signed bytes; value i of a
/// block is d · q[i].
typedef struct __attribute__((packed)) {
    uint16_t d;
    int8_t q[32];
} q8_0_block;

/// Values `index` … `index` + 7 (`index` a multiple of 8) of the Q8_0 blocks at `base`.
static inline __m256 load_q8_0(const void *base, long index) {
    const q8_0_block *block = (const q8_0_block *)base + index / 32;
    const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(block->q + index % 32))));
    return _mm256_mul_ps(_mm256_set1_ps(half_bits_to_float(block->d)), q);
}
static inline float scalar_q8_0(const void *base, long index) {
    const q8_0_block *block = (const q8_0_block *)base + index / 32;
    return half_bits_to_float(block->d) * (float)block->q[index % 32];
}

/// e^x for eight values, x ≤ 0 (Cephes' `expf`: x = n ln 2 + r with |r| ≤ ln 2 / 2, a degree-7
/// polynomial for e^r, 2^n put in the exponent bits): within 1.3 ulp of e^x over [−87, 0], and
/// ~1e-38 instead of 0 below −87.3.
static inline __m256 exp8(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

/// The largest of `count` floats, or NaN when any is NaN (as NumPy's `max`).
static float maximum_f32(const float *x, long count) {
    __m256 maxima = _mm256_set1_ps(-INFINITY), unordered = _mm256_setzero_ps();
    long p = 0;
    for (; p + 8 <= count; p += 8) {
        const __m256 v = _mm256_loadu_ps(x + p);
        maxima = _mm256_max_ps(maxima, v);
        unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    float maximum = horizontal_max(maxima);
    int any_nan = _mm256_movemask_ps(unordered) != 0;
    for (; p < count; p++) {
        any_nan |= isnan(x[p]);
        maximum = x[p] > maximum ? x[p] : maximum;
    }
    return any_nan ? NAN : maximum;
}

/// The sum of eight floats' doubles.
static inline __m256d widened_sum(__m256d totals, __m256 e) {
    return _mm256_add_pd(totals, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)), _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
}

/// The sum of the four lanes of `totals`.
static inline double horizontal_sum_pd(__m256d totals) {
    __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(totals), _mm256_extractf128_pd(totals, 1));
    return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

static float lumen_log_sum_exp(const float *x, long count) {
    const float maximum = maximum_f32(x, count);
    if (!isfinite(maximum)) return maximum;
    const __m256 shift = _mm256_set1_ps(maximum);
    __m256d totals = _mm256_setzero_pd();
    long p = 0;
    for (; p + 8 <= count; p += 8) totals = widened_sum(totals, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + p), shift)));
    double total = horizontal_sum_pd(totals);
    for (; p < count; p++) total += exp((double)(x[p] - maximum));
    return maximum + (float)log(total);
}

/// NumPy's softmax of a whole row with one exponential per element: e^(x − max) into `out`
/// (below e^-87.3 exactly 0, as expf's), summed in doubles, then `out` times 1 / the sum. Returns 0
/// when the maximum is not finite (NaN or ±∞), which the caller handles.
static int softmax_by_maximum(const float *x, long count, float *out) {
    const float maximum = maximum_f32(x, count);
    if (!isfinite(maximum)) return 0;
    const __m256 shift = _mm256_set1_ps(maximum), lowest = _mm256_set1_ps(-87.3f);
    __m256d totals = _mm256_setzero_pd();
    long p = 0;
    for (; p + 8 <= count; p += 8) {
        const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + p), shift);
        const __m256 e = _mm256_and_ps(exp8(d), _mm256_cmp_ps(d, lowest, _CMP_GE_OQ));
        _mm256_storeu_ps(out + p, e);
        totals = widened_sum(totals, e);
    }
    double total = horizontal_sum_pd(totals);
    for (; p < count; p++) total += out[p] = expf(x[p] - maximum);
    const float inverse = (float)(1.0 / total);
    const __m256 scale = _mm256_set1_ps(inverse);
    for (p = 0; p + 8 <= count; p += 8) _mm256_storeu_ps(out + p, _mm256_mul_ps(_mm256_loadu_ps(out + p), scale));
    for (; p < count; p++) out[p] *= inverse;
    return 1;
}

#if LUMEN_NATIVE_AVX2
/// exp8 sixteen lanes at a time, for AVX-512 CPUs: the same steps, so the same values.
AVX512_TARGET static inline __m512 exp16(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i exponent = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(exponent));
}

/// softmax_by_maximum sixteen lanes at a time, for AVX-512 CPUs (where NumPy's own exp is
/// sixteen wide): the same values, the sum in eight double lanes.
AVX512_TARGET static int softmax_by_maximum_avx512(const float *x, long count, float *out) {
    __m512 maxima = _mm512_set1_ps(-INFINITY);
    __mmask16 unordered = 0;
    long p = 0;
    for (; p + 16 <= count; p += 16) {
        const __m512 v = _mm512_loadu_ps(x + p);
        maxima = _mm512_max_ps(maxima, v);
        unordered |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    float maximum = count >= 16 ? _mm512_reduce_max_ps(maxima) : -INFINITY;
    int any_nan = unordered != 0;
    for (; p < count; p++) {
        any_nan |= isnan(x[p]);
        maximum = x[p] > maximum ? x[p] : maximum;
    }
    if (any_nan || !isfinite(maximum)) return 0;
    const __m512 shift = _mm512_set1_ps(maximum), lowest = _mm512_set1_ps(-87.3f);
    __m512d totals = _mm512_setzero_pd();
    for (p = 0; p + 16 <= count; p += 16) {
        const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + p), shift);
        const __m512 e = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, lowest, _CMP_GE_OQ), exp16(d));
        _mm512_storeu_ps(out + p, e);
        const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1));
        totals = _mm512_add_pd(totals, _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(e)), _mm512_cvtps_pd(high)));
    }
    double total = _mm512_reduce_add_pd(totals);
    for (; p < count; p++) total += out[p] = expf(x[p] - maximum);
    const float inverse = (float)(1.0 / total);
    const __m512 scale = _mm512_set1_ps(inverse);
    for (p = 0; p + 16 <= count; p += 16) _mm512_storeu_ps(out + p, _mm512_mul_ps(_mm512_loadu_ps(out + p), scale));
    for (; p < count; p++) out[p] *= inverse;
    return 1;
}
#endif

static void lumen_softmax_f32(const float *x, long count, float *out, int logarithmic, const float *given) {
    if (!given && !logarithmic) {
#if LUMEN_NATIVE_AVX2
        if (has_avx512() ? softmax_by_maximum_avx512(x, count, out) : softmax_by_maximum(x, count, out)) return;
#else
        if (softmax_by_maximum(x, count, out)) return;
#endif
    }
    const float normalizer = given ? *given : lumen_log_sum_exp(x, count);
    if (logarithmic) {
        for (long p = 0; p < count; p++) out[p] = x[p] - normalizer;
        return;
    }
    long p = 0;
    // exp8 needs arguments ≤ 0, which x − log Σ e^x is when the sum is finite.
    if (isfinite(normalizer)) {
        const __m256 shift = _mm256_set1_ps(normalizer);
        const __m256 lowest = _mm256_set1_ps(-87.3f);
        for (; p + 8 <= count; p += 8) {
            // Below e^-87.3 (and for −∞) the probability is 0, as expf's.
            const __m256 d = _mm256_min_ps(_mm256_sub_ps(_mm256_loadu_ps(x + p), shift), _mm256_setzero_ps());
            _mm256_storeu_ps(out + p, _mm256_and_ps(exp8(d), _mm256_cmp_ps(d, lowest, _CMP_GE_OQ)));
        }
    }
    for (; p < count; p++) out[p] = expf(x[p] - normalizer);
}

/// The softmax's numerators in place: `row[p]` = e^(row[p] − max) over `[first, end)`, eight at a
/// time; returns 1 / their total. A finite `sink` (gpt-oss's per-head attention sink) is one more
/// score, counted in the maximum and the total but attending to nothing; −∞ is none.
static float exponentiate(float *row, long first, long end, float sink) {
    __m256 maxima = _mm256_set1_ps(-INFINITY);
    long p = first;
    for (; p + 8 <= end; p += 8) maxima = _mm256_max_ps(maxima, _mm256_loadu_ps(row + p));
    float maximum = horizontal_max(maxima);
    for (; p < end; p++) maximum = row[p] > maximum ? row[p] : maximum;
    maximum = sink > maximum ? sink : maximum;
    const __m256 shift = _mm256_set1_ps(maximum);
    __m256 totals = _mm256_setzero_ps();
    p = first;
    for (; p + 8 <= end; p += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + p), shift));
        _mm256_storeu_ps(row + p, e);
        totals = _mm256_add_ps(totals, e);
    }
    float total = horizontal_sum(totals);
    for (; p < end; p++) {
        row[p] = expf(row[p] - maximum);
        total += row[p];
    }
    if (sink > -INFINITY) total += expf(sink - maximum);
    return 1.0f / total;
}

/// Defines `lumen_attend_<NAME>`: scores of the query against each cached key (`dim` values,
/// eight at a time), the softmax (`exp8`, with the `sink`), and the weighted sum of the
/// cached values, 64 output values at a time in registers over every position (then the remaining
/// whole vectors together). Returns 1 / the softmax's total, which `scores` are the numerators of.
#define DEFINE_ATTEND(NAME, ELEMENT, LOAD, SCALAR)                                                        \
    static float lumen_attend_##NAME(const void *keys, const void *values, long stride, const float *query, long dim, \
                             long first, long length, float scale, float sink, float *scores, float *out) { \
        const ELEMENT *k = (const ELEMENT *)keys, *v = (const ELEMENT *)values;                           \
        long p = first;                                                                                   \
        /* Four positions at a time: independent sums, each query load shared. */                        \
        for (; p + 4 <= length && dim % 8 == 0; p += 4) {                                                 \
            __m256 sum[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()}; \
            for (long i = 0; i < dim; i += 8) {                                                           \
                const __m256 q = _mm256_loadu_ps(query + i);                                              \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 4; j++) sum[j] = _mm256_fmadd_ps(LOAD(k + (p + j) * stride, i), q, sum[j]); \
            }                                                                                             \
            for (int j = 0; j < 4; j++) scores[p + j] = horizontal_sum(sum[j]) * scale;                  \
        }                                                                                                 \
        for (; p < length; p++) {                                                                         \
            __m256 sum = _mm256_setzero_ps();                                                             \
            long i = 0;                                                                                   \
            for (; i + 8 <= dim; i += 8) sum = _mm256_fmadd_ps(LOAD(k + p * stride, i), _mm256_loadu_ps(query + i), sum); \
            float score = horizontal_sum(sum);                                                           \
            for (; i < dim; i++) score += SCALAR(k + p * stride, i) * query[i];                           \
            scores[p] = score * scale;                                                                    \
        }                                                                                                 \
        const float inverse = exponentiate(scores, first, length, sink);                                  \
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
        return inverse;                                                                                   \
    }

DEFINE_ATTEND(f32, float, load_f32, scalar_f32)
DEFINE_ATTEND(f16, uint16_t, load_f16, scalar_f16)
DEFINE_ATTEND(q8_0, q8_0_block, load_q8_0, scalar_q8_0)

/// The totals of four vectors' lanes: lane j of the result is the sum of `s[j]`.
static inline __m128 horizontal_sums4(const __m256 *s) {
    const __m256 pairs = _mm256_hadd_ps(_mm256_hadd_ps(s[0], s[1]), _mm256_hadd_ps(s[2], s[3]));
    return _mm_add_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1));
}

/// Defines `lumen_attend4_<NAME>`: four consecutive tokens' queries of one head, query j over
/// positions `[0, length + j)`, each key and value loaded (and widened) once for the four. Scores
/// go to `scores + j * scores_stride`; `dim` must be a multiple of 8.
#define DEFINE_ATTEND4(NAME, ELEMENT, LOAD)                                                              \
    static void lumen_attend4_##NAME(const void *keys, const void *values, long stride, const float *query,      \
                              long query_stride, long dim, long length, float scale, float sink, float *scores, \
                              long scores_stride, float *out, long out_stride) {                          \
        const ELEMENT *k = (const ELEMENT *)keys, *v = (const ELEMENT *)values;                           \
        float inverse[4];                                                                                 \
        for (long p = 0; p < length + 3; p++) {                                                           \
            __m256 sum[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()}; \
            for (long i = 0; i < dim; i += 8) {                                                           \
                const __m256 key = LOAD(k + p * stride, i);                                               \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 4; j++) sum[j] = _mm256_fmadd_ps(key, _mm256_loadu_ps(query + j * query_stride + i), sum[j]); \
            }                                                                                             \
            float totals[4];                                                                              \
            _mm_storeu_ps(totals, _mm_mul_ps(horizontal_sums4(sum), _mm_set1_ps(scale)));                 \
            for (int j = 0; j < 4; j++)                                                                   \
                if (p < length + j) scores[j * scores_stride + p] = totals[j];                            \
        }                                                                                                 \
        for (int j = 0; j < 4; j++) inverse[j] = exponentiate(scores + j * scores_stride, 0, length + j, sink); \
        /* Sixteen output values of the four queries at a time (eight for the last), over every     \
           position; the last three positions are not seen by every query. */                            \
        for (long d = 0; d < dim; d += 16) {                                                              \
            const int vectors = dim - d >= 16 ? 2 : 1;                                                    \
            __m256 acc[4][2];                                                                             \
            for (int j = 0; j < 4; j++) acc[j][0] = acc[j][1] = _mm256_setzero_ps();                      \
            for (long p = 0; p < length + 3; p++) {                                                       \
                const __m256 low = LOAD(v + p * stride, d);                                               \
                const __m256 high = vectors == 2 ? LOAD(v + p * stride, d + 8) : _mm256_setzero_ps();     \
                _Pragma("clang loop unroll(full)")                                                        \
                for (int j = 0; j < 4; j++) {                                                             \
                    if (p >= length + j) continue;                                                        \
                    const __m256 weight = _mm256_set1_ps(scores[j * scores_stride + p]);                  \
                    acc[j][0] = _mm256_fmadd_ps(weight, low, acc[j][0]);                                  \
                    acc[j][1] = _mm256_fmadd_ps(weight, high, acc[j][1]);                                 \
                }                                                                                         \
            }                                                                                             \
            for (int j = 0; j < 4; j++)                                                                   \
                for (int c = 0; c < vectors; c++)                                                         \
                    _mm256_storeu_ps(out + j * out_stride + d + 8 * c, _mm256_mul_ps(acc[j][c], _mm256_set1_ps(inverse[j]))); \
        }                                                                                                 \
    }

DEFINE_ATTEND4(f32, float, load_f32)
DEFINE_ATTEND4(f16, uint16_t, load_f16)
DEFINE_ATTEND4(q8_0, q8_0_block, load_q8_0)

static void lumen_store_f32(const float *x, void *out, long count) { memcpy(out, x, (size_t)count * sizeof(float)); }

static void lumen_store_f16(const float *x, void *out, long count) {
    uint16_t *halves = (uint16_t *)out;
    long i = 0;
    for (; i + 8 <= count; i += 8)
        _mm_storeu_si128((__m128i *)(halves + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < count; i++) halves[i] = float_to_half_bits(x[i]);
}

/// `count` floats (a multiple of 32) as Q8_0 blocks, as ggml's CPU `quantize_row_q8_0` writes a
/// Q8_0 KV cache (its x86 and Arm paths alike): per block d = max |x| / 127, stored as F16, and
/// q = x · (127 / max |x|) rounded to nearest, ties to even.
static void lumen_store_q8_0(const float *x, void *out, long count) {
    q8_0_block *block = (q8_0_block *)out;
    for (long b = 0; b < count / 32; b++, block++, x += 32) {
        float amax = 0.0f;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[i]));
        const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
        block->d = float_to_half_bits(amax / 127.0f);
        for (int i = 0; i < 32; i++) block->q[i] = (int8_t)nearbyintf(x[i] * inverse);
    }
}
