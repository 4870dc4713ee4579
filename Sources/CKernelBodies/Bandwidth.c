// The memory-bandwidth probe's read loop.

#include "Shared.h"

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
