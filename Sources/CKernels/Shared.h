#ifndef LUMEN_CKERNELS_SHARED_H
#define LUMEN_CKERNELS_SHARED_H

// What the kernel files share and the module does not export: F16 conversion, a horizontal sum,
// CPU feature checks, the VNNI target attribute and the IQ4 value table.

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define VNNI_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))

/// The F16 at `p` (any alignment) as a float.
static inline float half_to_float(const uint8_t *p) {
    uint16_t bits;
    memcpy(&bits, p, 2);
    return _cvtsh_ss(bits);
}

/// The sum of the eight lanes of `v`.
static inline float horizontal_sum(__m256 v) {
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
    return _mm_cvtss_f32(sum);
}

/// Whether the CPU has AVX-512 VNNI (one instruction for unsigned × signed byte dot products).
static inline int has_vnni(void) {
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
    return cached;
}

/// The 16 values IQ4_NL and IQ4_XS nibbles index (ggml's `kvalues_iq4nl`).
extern const int8_t lumen_iq4_values[16];

#endif
