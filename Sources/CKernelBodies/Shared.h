#ifndef LUMEN_CKERNELS_SHARED_H
#define LUMEN_CKERNELS_SHARED_H

// What the kernel files share and the module does not export: the instruction set, F16
// conversion, a horizontal sum, CPU feature checks, the VNNI target attribute and the IQ4 and
// MXFP4 value tables.
//
// The kernels are written with x86's AVX2, FMA and F16C intrinsics. Built for x86-64-v3 (the
// default on x86-64) they are those instructions; otherwise (`LUMEN_PORTABLE=1`, arm64) SIMDe
// (Debian's libsimde-dev, Homebrew's simde) implements the same intrinsics portably, with NEON on
// Arm and SSE or plain C elsewhere, so every platform runs the same kernel source.

#include <stdint.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
/// Whether the kernels are compiled to native AVX2 instructions (else through SIMDe).
#define LUMEN_NATIVE_AVX2 1
#define VNNI_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))
#define AVX512_TARGET __attribute__((target("avx2,fma,f16c,avx512f")))
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx2.h>
#include <simde/x86/fma.h>
#include <simde/x86/f16c.h>
#define LUMEN_NATIVE_AVX2 0
// SIMDe's aliases leave out the rounding-mode and comparison constants; x86 hosts get them from the system's
// SSE headers, other architectures from here.
#ifndef _MM_FROUND_NO_EXC
#define _MM_FROUND_NO_EXC SIMDE_MM_FROUND_NO_EXC
#endif
#ifndef _MM_FROUND_TO_NEAREST_INT
#define _MM_FROUND_TO_NEAREST_INT SIMDE_MM_FROUND_TO_NEAREST_INT
#endif
#ifndef _MM_ROUND_NEAREST
#define _MM_ROUND_NEAREST SIMDE_MM_ROUND_NEAREST
#endif
#ifndef _CMP_GE_OQ
#define _CMP_GE_OQ SIMDE_CMP_GE_OQ
#endif
#ifndef _CMP_UNORD_Q
#define _CMP_UNORD_Q SIMDE_CMP_UNORD_Q
#endif
#endif

#if LUMEN_NATIVE_AVX2
/// `definition`, a kernel's AVX-512 VNNI variant, where there is one (native x86 builds).
#define VNNI_VARIANT(definition) definition
/// `vnni_call` when the CPU has VNNI and `without_vnni` (the tests' switch) is 0, else `avx2_call`.
#define CHOOSE_VNNI(without_vnni, vnni_call, avx2_call) (has_vnni() && !(without_vnni) ? (vnni_call) : (avx2_call))
#else
#define VNNI_VARIANT(definition)
#define CHOOSE_VNNI(without_vnni, vnni_call, avx2_call) ((void)(without_vnni), (avx2_call))
#endif

/// One F16 (its bits) as a float.
static inline float half_bits_to_float(uint16_t bits) {
#if LUMEN_NATIVE_AVX2
    return _cvtsh_ss(bits);
#else
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
#endif
}

/// `x` rounded to the nearest F16, as its bits.
static inline uint16_t float_to_half_bits(float x) {
#if LUMEN_NATIVE_AVX2
    return _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT);
#else
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT), 0);
#endif
}

/// The F16 at `p` (any alignment) as a float.
static inline float half_to_float(const uint8_t *p) {
    uint16_t bits;
    memcpy(&bits, p, 2);
    return half_bits_to_float(bits);
}

/// How far ahead of the block it is reading a matrix–vector kernel (Q4_0 and the K-quants) asks
/// for weights, in bytes. A generation step streams every weight once, and the hardware
/// prefetcher alone keeps too few lines in flight for one core (perf: the samples sit on the first
/// use of each loaded block); 2048 beat 1024 and 4096 on 1.1B Q4_K_M generation (BENCHMARKS.md).
#ifndef WEIGHT_PREFETCH_DISTANCE
#define WEIGHT_PREFETCH_DISTANCE 2048
#endif

/// Asks for the `bytes`-byte block `WEIGHT_PREFETCH_DISTANCE` bytes past `block` (a hint: never
/// faults, past the end of a matrix included).
static inline void prefetch_weights_ahead(const uint8_t *block, int bytes) {
    for (int offset = 0; offset < bytes; offset += 64) __builtin_prefetch(block + WEIGHT_PREFETCH_DISTANCE + offset, 0, 3);
}

/// The sum of the eight lanes of `v`.
static inline float horizontal_sum(__m256 v) {
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
    return _mm_cvtss_f32(sum);
}

/// The largest of the eight lanes of `v` (a NaN lane may or may not win: callers that care track NaN).
static inline float horizontal_max(__m256 v) {
    __m128 half = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    half = _mm_max_ps(half, _mm_movehl_ps(half, half));
    return _mm_cvtss_f32(_mm_max_ss(half, _mm_movehdup_ps(half)));
}

/// Whether the CPU has AVX-512 Foundation (16-float registers, 32 of them).
static inline int has_avx512(void) {
#if LUMEN_NATIVE_AVX2
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx512f");
    return cached;
#else
    return 0;
#endif
}

/// Whether the CPU has AVX-512 VNNI (one instruction for unsigned × signed byte dot products).
static inline int has_vnni(void) {
#if LUMEN_NATIVE_AVX2
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
    return cached;
#else
    return 0;
#endif
}

/// The 16 values IQ4_NL and IQ4_XS nibbles index (ggml's `kvalues_iq4nl`).
static const int8_t lumen_iq4_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/// The 16 values MXFP4 nibbles index: FP4 (E2M1) numbers, doubled so that they are integers
/// (ggml's `kvalues_mxfp4`; the block scale is halved to match).
static const int8_t lumen_mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

#endif
