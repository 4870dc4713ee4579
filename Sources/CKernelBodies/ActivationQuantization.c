// Activations rounded to 8 bits for the integer products: one vector (`lumen_quantize_q8`), and
// a prompt batch's vectors in chunks of tokens (`lumen_quantize_q8_tokens`).

#include "Shared.h"
#include "../CKernels/include/KernelLayout.h"

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
        const float max_abs = horizontal_max(amax);
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

/// Tokens a chunk of the product's activations holds (see `lumen_quantize_q8_tokens`).
enum { TOKEN_CHUNK = LUMEN_TOKEN_CHUNK };

static void lumen_quantize_q8_tokens(const float *x, long tokens, long k, signed char *values, float *scales, float *sums) {
    const long blocks = k / 32;
    for (long t = 0; t < (tokens + TOKEN_CHUNK - 1) / TOKEN_CHUNK * TOKEN_CHUNK; t++) {
        const long u = t % TOKEN_CHUNK;
        signed char *chunk_values = values + TOKEN_CHUNK * k * (t / TOKEN_CHUNK);
        float *chunk_scales = scales + TOKEN_CHUNK * blocks * (t / TOKEN_CHUNK), *chunk_sums = sums + 3 * TOKEN_CHUNK * blocks * (t / TOKEN_CHUNK);
        for (long b = 0; b < blocks; b++) {
            signed char block[32] = {0};
            float block_scale = 0.0f, block_sums[3] = {0.0f, 0.0f, 0.0f};
            if (t < tokens) lumen_quantize_q8(x + t * k + 32 * b, 32, block, &block_scale, block_sums);
            memcpy(chunk_values + TOKEN_CHUNK * 16 * (2 * b) + 16 * u, block, 16);
            memcpy(chunk_values + TOKEN_CHUNK * 16 * (2 * b + 1) + 16 * u, block + 16, 16);
            chunk_scales[TOKEN_CHUNK * b + u] = block_scale;
            chunk_sums[TOKEN_CHUNK * b + u] = block_sums[0];
            chunk_sums[TOKEN_CHUNK * (blocks + 2 * b) + u] = block_sums[1];
            chunk_sums[TOKEN_CHUNK * (blocks + 2 * b + 1) + u] = block_sums[2];
        }
    }
}
