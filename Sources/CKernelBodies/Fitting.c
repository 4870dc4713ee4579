// The scale searches of the K-quant quantizers (see BlockQuantizer.swift): for one sub-block,
// try a range of candidate scales, fit each candidate's levels by weighted least squares, and
// keep the fit whose re-rounded values have the smallest weighted squared error. These are the
// quantizer's inner loops, eight values per AVX2 instruction.

#include "Shared.h"

#include <math.h>

/// `v` rounded to the nearest integer (ties to even) and clamped to `low...high`.
static inline __m256 clamped_levels(__m256 v, __m256 low, __m256 high) {
    return _mm256_min_ps(high, _mm256_max_ps(low, _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
}

static float lumen_fit_affine(const float *x, const float *weights, int count, int levels, float *offset) {
    __m256 low8 = _mm256_setzero_ps(), high8 = _mm256_loadu_ps(x);
    __m256 sum_w8 = _mm256_setzero_ps(), sum_x8 = _mm256_setzero_ps();
    for (int i = 0; i < count; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i), w = _mm256_loadu_ps(weights + i);
        low8 = _mm256_min_ps(low8, v);
        high8 = _mm256_max_ps(high8, v);
        sum_w8 = _mm256_add_ps(sum_w8, w);
        sum_x8 = _mm256_fmadd_ps(w, v, sum_x8);
    }
    float lanes[8], low = 0, high;
    _mm256_storeu_ps(lanes, low8);
    for (int i = 0; i < 8; i++) low = fminf(low, lanes[i]);
    _mm256_storeu_ps(lanes, high8);
    high = lanes[0];
    for (int i = 1; i < 8; i++) high = fmaxf(high, lanes[i]);
    *offset = low;
    if (!(high > low)) return 0;
    float top = (float)levels, sum_w = horizontal_sum(sum_w8), sum_x = horizontal_sum(sum_x8);
    float best_scale = (high - low) / top, best_offset = low, best_error = INFINITY;
    const __m256 zero = _mm256_setzero_ps(), top8 = _mm256_set1_ps(top), low_broadcast = _mm256_set1_ps(low);
    for (int step = 0; step <= 20; step++) {
        __m256 inverse = _mm256_set1_ps((top - 1 + 0.1f * (float)step) / (high - low));
        __m256 sum_l8 = zero, sum_l28 = zero, sum_xl8 = zero;
        for (int i = 0; i < count; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            __m256 level = clamped_levels(_mm256_mul_ps(inverse, _mm256_sub_ps(v, low_broadcast)), zero, top8);
            __m256 weighted = _mm256_mul_ps(_mm256_loadu_ps(weights + i), level);
            sum_l8 = _mm256_add_ps(sum_l8, weighted);
            sum_l28 = _mm256_fmadd_ps(weighted, level, sum_l28);
            sum_xl8 = _mm256_fmadd_ps(weighted, v, sum_xl8);
        }
        float sum_l = horizontal_sum(sum_l8), sum_l2 = horizontal_sum(sum_l28), sum_xl = horizontal_sum(sum_xl8);
        float determinant = sum_w * sum_l2 - sum_l * sum_l;
        if (!(determinant > 0)) continue;
        float scale = (sum_w * sum_xl - sum_x * sum_l) / determinant;
        float shift = (sum_l2 * sum_x - sum_l * sum_xl) / determinant;
        if (shift > 0) {
            shift = 0;
            scale = sum_xl / sum_l2;
        }
        if (!(scale > 0)) continue;
        __m256 scale8 = _mm256_set1_ps(scale), shift8 = _mm256_set1_ps(shift), reciprocal = _mm256_set1_ps(1 / scale);
        __m256 error8 = zero;
        for (int i = 0; i < count; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            __m256 level = clamped_levels(_mm256_mul_ps(_mm256_sub_ps(v, shift8), reciprocal), zero, top8);
            __m256 difference = _mm256_sub_ps(_mm256_fmadd_ps(scale8, level, shift8), v);
            error8 = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(weights + i), difference), difference, error8);
        }
        float error = horizontal_sum(error8);
        if (error < best_error) {
            best_scale = scale;
            best_offset = shift;
            best_error = error;
        }
    }
    *offset = best_offset;
    return best_scale;
}

static float lumen_fit_symmetric(const float *x, int count, int max_level) {
    float extreme = 0;
    for (int i = 0; i < count; i++) {
        if (fabsf(x[i]) > fabsf(extreme)) extreme = x[i];
    }
    if (extreme == 0) return 0;
    const __m256 zero = _mm256_setzero_ps();
    const __m256 low = _mm256_set1_ps(-(float)max_level), high = _mm256_set1_ps((float)max_level - 1);
    float best_scale = extreme / -(float)max_level, best_error = INFINITY;
    for (int step = -9; step <= 9; step++) {
        __m256 inverse = _mm256_set1_ps(-((float)max_level + 0.1f * (float)step) / extreme);
        __m256 sum_xl8 = zero, sum_l28 = zero;
        for (int i = 0; i < count; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            __m256 level = clamped_levels(_mm256_mul_ps(inverse, v), low, high);
            __m256 weighted = _mm256_mul_ps(_mm256_mul_ps(v, v), level);
            sum_xl8 = _mm256_fmadd_ps(weighted, v, sum_xl8);
            sum_l28 = _mm256_fmadd_ps(weighted, level, sum_l28);
        }
        float sum_xl = horizontal_sum(sum_xl8), sum_l2 = horizontal_sum(sum_l28);
        if (!(sum_l2 > 0)) continue;
        float scale = sum_xl / sum_l2;
        if (scale == 0) continue;
        __m256 scale8 = _mm256_set1_ps(scale), reciprocal = _mm256_set1_ps(1 / scale), error8 = zero;
        for (int i = 0; i < count; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            __m256 difference = _mm256_fmsub_ps(scale8, clamped_levels(_mm256_mul_ps(v, reciprocal), low, high), v);
            __m256 weighted = _mm256_mul_ps(_mm256_mul_ps(v, v), difference);
            error8 = _mm256_fmadd_ps(weighted, difference, error8);
        }
        float error = horizontal_sum(error8);
        if (error < best_error) {
            best_scale = scale;
            best_error = error;
        }
    }
    return best_scale;
}
