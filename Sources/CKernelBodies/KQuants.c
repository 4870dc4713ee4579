// The K-quants, 256 weights to a block in sub-blocks with their own scales: Q2_K, Q3_K, Q4_K,
// Q5_K and Q6_K. Each has a dequantization, an F32 dot product, a dot product with 8-bit
// activations and a levels decoder; its row in Formats.c names them.

#include "Blocks.h"

// MARK: - What the K-quants share

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

/// Bits `shift`, `shift` + 1, … of each of 32 bytes, masked by `mask` (a per-byte mask after a
/// 16-bit shift: the bits a byte receives from its neighbour are masked away).
static inline __m256i byte_bits(__m256i bytes, int shift, int mask) {
    return _mm256_and_si256(_mm256_srl_epi16(bytes, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8((char)mask));
}

/// Q4_K (`high` null) or Q5_K: eight sub-blocks of 32 with 6-bit scales and mins packed in 12
/// bytes (see `k_scales_and_mins` in CKernels.c); `nibbles` holds sub-blocks 2p (low) and 2p + 1
/// (high) in each 32-byte run p, and bit `sub` of `high[l]` is the fifth bit of weight l of
/// sub-block `sub`.
static void k_levels(const uint8_t *block, const uint8_t *high, const uint8_t *nibbles, uint8_t *levels, float *scales, float *mins) {
    const float d = half_to_float(block), dmin = half_to_float(block + 2);
    const uint8_t *packed = block + 4;
    for (int sub = 0; sub < 8; sub++) {
        const int scale = sub < 4 ? packed[sub] & 63 : (packed[sub + 4] & 0x0F) | ((packed[sub - 4] >> 6) << 4);
        const int min = sub < 4 ? packed[sub + 4] & 63 : (packed[sub + 4] >> 4) | ((packed[sub] >> 6) << 4);
        two_groups(scales, mins, sub, d * (float)scale, -dmin * (float)min);
    }
    const __m256i fifth = high ? _mm256_loadu_si256((const __m256i *)high) : _mm256_setzero_si256();
    for (int pair = 0; pair < 4; pair++) {
        const __m256i run = _mm256_loadu_si256((const __m256i *)(nibbles + 32 * pair));
        const __m256i low = _mm256_or_si256(byte_bits(run, 0, 0x0F), _mm256_slli_epi16(byte_bits(fifth, 2 * pair, 1), 4));
        const __m256i top = _mm256_or_si256(byte_bits(run, 4, 0x0F), _mm256_slli_epi16(byte_bits(fifth, 2 * pair + 1, 1), 4));
        _mm256_storeu_si256((__m256i *)(levels + 64 * pair), low);
        _mm256_storeu_si256((__m256i *)(levels + 64 * pair + 32), top);
    }
}

/// `v`'s lanes 2j (lanes 0–3) and 2j + 1 (lanes 4–7): the scales of the two 16-weight
/// sub-blocks that one 32-value activation block `j` covers.
static inline __m256 sub_block_pair(__m256 v, int j) {
    return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(2 * j, 2 * j, 2 * j, 2 * j, 2 * j + 1, 2 * j + 1, 2 * j + 1, 2 * j + 1));
}

/// The activation scales of 32-value blocks `first` to `first + 3`, each in the two lanes of
/// the 16-weight sub-blocks it covers.
static inline __m256 activation_scales_by_sub_block(const float *scales) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(scales)), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

// MARK: - Q2_K

/// Q2_K blocks (84 bytes): 16 bytes of 4-bit scales (low) and mins (high), 64 bytes of 2-bit
/// values, F16 `d` and `dmin`; w = d·scale·q − dmin·min per 16 values.
static void dequantize_q2_k(const void *row, float *out, long count) {
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

DEFINE_WIDENING_DOT(dot_q2_k, dequantize_q2_k, 256, 84)

/// Defines a Q2_K × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`). Activation block
/// j (of 32) meets the 2-bit values at shift 2·(j mod 4) of the 32 bytes of half j / 4, unpacked
/// once for all the tokens; products come in int32 lanes of four weights, lanes 0–3 in one
/// 16-weight sub-block and 4–7 in the next, so each lane takes its sub-block's d · scale × the
/// activation scale. The dmin · min each sub-block owes meets the activations' 16-value sums
/// (`lumen_quantize_q8`'s half sums), sixteen at a time.
#define DEFINE_Q2_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                             \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const long n = count / 32;                                                                           \
        const __m256i two_bits = _mm256_set1_epi8(3);                                                        \
        const __m256i nibble_mask = _mm256_set1_epi32(0x0F);                                                 \
        __m256 sum0[TOKENS], sum1[TOKENS], offsets[TOKENS];                                                  \
        for (int t = 0; t < (TOKENS); t++) sum0[t] = sum1[t] = offsets[t] = _mm256_setzero_ps();             \
        for (long b = 0; b < n / 8; b++, block += 84) {                                                      \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 80)), dmin = _mm256_set1_ps(half_to_float(block + 82)); \
            const __m256i packed0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)block));          \
            const __m256i packed1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(block + 8)));    \
            const __m256 mins0 = _mm256_cvtepi32_ps(_mm256_srli_epi32(packed0, 4));                          \
            const __m256 mins1 = _mm256_cvtepi32_ps(_mm256_srli_epi32(packed1, 4));                          \
            for (int t = 0; t < (TOKENS); t++) {                                                             \
                const float *half_sums = sums + 3 * t * n + n + 16 * b;                                      \
                const __m256 mins = _mm256_fmadd_ps(mins0, _mm256_loadu_ps(half_sums), _mm256_mul_ps(mins1, _mm256_loadu_ps(half_sums + 8))); \
                offsets[t] = _mm256_fmadd_ps(dmin, mins, offsets[t]);                                        \
            }                                                                                                \
            for (int half = 0; half < 2; half++) {                                                           \
                const __m256 scaled = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_and_si256(half ? packed1 : packed0, nibble_mask))); \
                const __m256i bits = _mm256_loadu_si256((const __m256i *)(block + 16 + 32 * half));          \
                __m256 combined[TOKENS];                                                                     \
                for (int t = 0; t < (TOKENS); t++)                                                           \
                    combined[t] = _mm256_mul_ps(scaled, activation_scales_by_sub_block(scales + t * n + 8 * b + 4 * half)); \
                for (int shift = 0; shift < 4; shift++) {                                                    \
                    const __m256i q = _mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * shift)), two_bits); \
                    for (int t = 0; t < (TOKENS); t++) {                                                     \
                        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 256 * b + 32 * (4 * half + shift))); \
                        const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(q, activations));                \
                        if (shift & 1) sum1[t] = _mm256_fmadd_ps(sub_block_pair(combined[t], shift), products, sum1[t]); \
                        else sum0[t] = _mm256_fmadd_ps(sub_block_pair(combined[t], shift), products, sum0[t]); \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++)                                                                   \
            out[t * out_stride] = horizontal_sum(_mm256_sub_ps(_mm256_add_ps(sum0[t], sum1[t]), offsets[t])); \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q2_k_q8, DEFINE_Q2_K_Q8_KERNEL)

static void levels_q2_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 84) {
        const float d = half_to_float(block + 80), dmin = half_to_float(block + 82);
        const uint8_t *group_scales = block, *q = block + 16;
        for (int half = 0; half < 2; half++, q += 32)
            for (int shift = 0; shift < 8; shift += 2)
                for (int part = 0; part < 2; part++, levels += 16, group_scales++, scales++, mins++) {
                    *scales = d * (float)(*group_scales & 0x0F);
                    *mins = -dmin * (float)(*group_scales >> 4);
                    for (int l = 0; l < 16; l++) levels[l] = (uint8_t)((q[l + 16 * part] >> shift) & 3);
                }
    }
}

// MARK: - Q3_K

/// Q3_K blocks (110 bytes): 32 bytes of high-bit masks, 64 bytes of 2-bit values, 12 bytes
/// packing sixteen 6-bit scales, F16 `d`; w = d·(scale − 32)·(q − 4 unless the high bit is set).
static void dequantize_q3_k(const void *row, float *out, long count) {
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

DEFINE_WIDENING_DOT(dot_q3_k, dequantize_q3_k, 256, 110)

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

/// Defines a Q3_K × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`). The unsigned
/// 3-bit value u = q + 4 · high bit, assembled once for all the tokens, meets the activations in
/// int32 lanes of four weights, scaled as in Q2_K by d · (scale − 32) × the activation scale of
/// their sub-block; weights are u − 4, so 4 · d · (scale − 32) times each sub-block's activation
/// sum (`lumen_quantize_q8`'s half sums) is taken off, sixteen at a time.
#define DEFINE_Q3_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                             \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const long n = count / 32;                                                                           \
        const __m256i two_bits = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);                           \
        __m256 sum0[TOKENS], sum1[TOKENS], offsets[TOKENS];                                                  \
        for (int t = 0; t < (TOKENS); t++) sum0[t] = sum1[t] = offsets[t] = _mm256_setzero_ps();             \
        for (long b = 0; b < n / 8; b++, block += 110) {                                                     \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 108));                                     \
            __m256 sub_scales[2];                                                                            \
            q3_k_scales(block + 96, &sub_scales[0], &sub_scales[1]);                                         \
            sub_scales[0] = _mm256_mul_ps(d, sub_scales[0]);                                                 \
            sub_scales[1] = _mm256_mul_ps(d, sub_scales[1]);                                                 \
            for (int t = 0; t < (TOKENS); t++) {                                                             \
                const float *half_sums = sums + 3 * t * n + n + 16 * b;                                      \
                offsets[t] = _mm256_fmadd_ps(sub_scales[0], _mm256_loadu_ps(half_sums),                      \
                                             _mm256_fmadd_ps(sub_scales[1], _mm256_loadu_ps(half_sums + 8), offsets[t])); \
            }                                                                                                \
            const __m256i high_bits = _mm256_loadu_si256((const __m256i *)block);                            \
            for (int half = 0; half < 2; half++) {                                                           \
                __m256 combined[TOKENS];                                                                     \
                for (int t = 0; t < (TOKENS); t++)                                                           \
                    combined[t] = _mm256_mul_ps(sub_scales[half], activation_scales_by_sub_block(scales + t * n + 8 * b + 4 * half)); \
                const __m256i bits = _mm256_loadu_si256((const __m256i *)(block + 32 + 32 * half));          \
                for (int shift = 0; shift < 4; shift++) {                                                    \
                    const int j = 4 * half + shift;                                                          \
                    const __m256i bit = _mm256_set1_epi8((char)(1 << j));                                    \
                    const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), four); \
                    const __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * shift)), two_bits), high); \
                    for (int t = 0; t < (TOKENS); t++) {                                                     \
                        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 256 * b + 32 * j)); \
                        const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(u, activations));                \
                        if (shift & 1) sum1[t] = _mm256_fmadd_ps(sub_block_pair(combined[t], shift), products, sum1[t]); \
                        else sum0[t] = _mm256_fmadd_ps(sub_block_pair(combined[t], shift), products, sum0[t]); \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++)                                                                   \
            out[t * out_stride] = horizontal_sum(_mm256_fnmadd_ps(_mm256_set1_ps(4.0f), offsets[t], _mm256_add_ps(sum0[t], sum1[t]))); \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q3_k_q8, DEFINE_Q3_K_Q8_KERNEL)

static void levels_q3_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 110) {
        const float d = half_to_float(block + 108);
        const uint8_t *mask = block, *q = block + 32, *packed = block + 96;
        int group = 0;
        uint8_t bit = 1;
        for (int half = 0; half < 2; half++, q += 32)
            for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
                for (int part = 0; part < 2; part++, group++, levels += 16, scales++, mins++) {
                    const int low = group < 8 ? (packed[group] & 0x0F) : (packed[group - 8] >> 4);
                    const int top = (packed[8 + (group % 4)] >> (2 * (group / 4))) & 3;
                    *scales = d * (float)((low | (top << 4)) - 32);
                    *mins = -4.0f * *scales;
                    for (int l = 0; l < 16; l++) {
                        const int index = l + 16 * part;
                        levels[l] = (uint8_t)(((q[index] >> shift) & 3) + ((mask[index] & bit) ? 4 : 0));
                    }
                }
    }
}

// MARK: - Q4_K and Q5_K

static void dequantize_q4_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 144, out += 256) dequantize_k_block(block, NULL, block + 16, out);
}

static void dequantize_q5_k(const void *row, float *out, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 176, out += 256) dequantize_k_block(block, block + 16, block + 48, out);
}

DEFINE_WIDENING_DOT(dot_q4_k, dequantize_q4_k, 256, 144)

DEFINE_WIDENING_DOT(dot_q5_k, dequantize_q5_k, 256, 176)


/// Defines a Q4_K (`HIGH` 0) or Q5_K (`HIGH` 1) × 8-bit kernel for `TOKENS` tokens
/// (`DEFINE_Q8_DOT_AND_TOKENS`). Each 32-weight sub-block meets one 32-value activation block:
/// d · scale · activation scale times the integer products, minus dmin · min · (activation scale ×
/// sum of activations), which `sums` already holds. A block's scales, mins and weights are
/// unpacked once for all the tokens; its eight combined scales and eight min terms are one vector
/// each per token.
#define DEFINE_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, HIGH, BLOCK_BYTES, NIBBLE_OFFSET)              \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                   \
        const uint8_t *block = (const uint8_t *)row;                                                         \
        const __m256i low_mask = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1), two = _mm256_set1_epi8(2); \
        const long n = count / 32;                                                                           \
        __m256 offsets[TOKENS], sum0[TOKENS], sum1[TOKENS];                                                  \
        for (int t = 0; t < (TOKENS); t++) offsets[t] = sum0[t] = sum1[t] = _mm256_setzero_ps();             \
        for (long b = 0; b < count / 256; b++, block += (BLOCK_BYTES)) {                                     \
            __m256 sub_scales, sub_mins;                                                                     \
            k_scales_and_mins(block + 4, &sub_scales, &sub_mins);                                            \
            const __m256 scaled = _mm256_mul_ps(sub_scales, _mm256_set1_ps(half_to_float(block)));           \
            const __m256 scaled_mins = _mm256_mul_ps(sub_mins, _mm256_set1_ps(half_to_float(block + 2)));    \
            __m256 combined[TOKENS];                                                                         \
            for (int t = 0; t < (TOKENS); t++) {                                                             \
                combined[t] = _mm256_mul_ps(scaled, _mm256_loadu_ps(scales + t * n + 8 * b));                \
                offsets[t] = _mm256_fmadd_ps(scaled_mins, _mm256_loadu_ps(sums + 3 * t * n + 8 * b), offsets[t]); \
            }                                                                                                \
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
                for (int t = 0; t < (TOKENS); t++) {                                                         \
                    const signed char *v = values + t * count + 256 * b + 64 * pair;                         \
                    const __m256i a0 = _mm256_loadu_si256((const __m256i *)v);                               \
                    const __m256i a1 = _mm256_loadu_si256((const __m256i *)(v + 32));                        \
                    sum0[t] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(combined[t], _mm256_set1_epi32(2 * pair)), \
                                              _mm256_cvtepi32_ps(PRODUCTS(low, a0)), sum0[t]);               \
                    sum1[t] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(combined[t], _mm256_set1_epi32(2 * pair + 1)), \
                                              _mm256_cvtepi32_ps(PRODUCTS(upper, a1)), sum1[t]);             \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int t = 0; t < (TOKENS); t++)                                                                   \
            out[t * out_stride] = horizontal_sum(_mm256_add_ps(sum0[t], sum1[t])) - horizontal_sum(offsets[t]); \
    }

#define DEFINE_Q4_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS) DEFINE_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, 0, 144, 16)
#define DEFINE_Q5_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS) DEFINE_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS, 1, 176, 48)

DEFINE_Q8_DOT_AND_TOKENS(dot_q4_k_q8, DEFINE_Q4_K_Q8_KERNEL)

DEFINE_Q8_DOT_AND_TOKENS(dot_q5_k_q8, DEFINE_Q5_K_Q8_KERNEL)

static void levels_q4_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 144, levels += 256, scales += 16, mins += 16)
        k_levels(block, NULL, block + 16, levels, scales, mins);
}

static void levels_q5_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 176, levels += 256, scales += 16, mins += 16)
        k_levels(block, block + 16, block + 48, levels, scales, mins);
}

// MARK: - Q6_K

static void dequantize_q6_k(const void *row, float *out, long count) {
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

DEFINE_WIDENING_DOT(dot_q6_k, dequantize_q6_k, 256, 210)

/// The 6-bit values u (weights + 32) of half `half` of a Q6_K block, in four vectors of 32 bytes:
/// weights l, l + 32, l + 64 and l + 96 of the half take the low nibble of low[l], of low[l + 32],
/// the high nibble of low[l], of low[l + 32], and bit pairs 0, 1, 2 and 3 of high[l].
static inline void q6_k_half_weights(const uint8_t *block, int half, __m256i low_mask, __m256i two_bits, __m256i weights[4]) {
    const __m256i low0 = _mm256_loadu_si256((const __m256i *)(block + 64 * half));
    const __m256i low1 = _mm256_loadu_si256((const __m256i *)(block + 64 * half + 32));
    const __m256i high = _mm256_loadu_si256((const __m256i *)(block + 128 + 32 * half));
    weights[0] = _mm256_or_si256(_mm256_and_si256(low0, low_mask), _mm256_slli_epi16(_mm256_and_si256(high, two_bits), 4));
    weights[1] = _mm256_or_si256(_mm256_and_si256(low1, low_mask), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2), two_bits), 4));
    weights[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low0, 4), low_mask),
                                 _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 4), two_bits), 4));
    weights[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(low1, 4), low_mask),
                                 _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 6), two_bits), 4));
}

/// Defines a Q6_K × 8-bit kernel for `TOKENS` tokens (`DEFINE_Q8_DOT_AND_TOKENS`). Weights are
/// 6-bit values u minus 32, each half-block's assembled once for all the tokens. The products of u
/// with the activations are taken in int32 lanes of four weights (lanes 0-3 are one 16-weight
/// sub-block, lanes 4-7 the next), each lane scaled by its sub-block's scale × d × the activation
/// block's scale, eight of which are computed at once; 32 · d · scale times each sub-block's
/// activation sum (`lumen_quantize_q8`'s half sums) is taken off, sixteen at a time.
#define DEFINE_Q6_K_Q8_KERNEL(NAME, ATTRIBUTES, PRODUCTS, TOKENS)                                             \
    ATTRIBUTES static void NAME(const void *row, const signed char *values, const float *scales, const float *sums, \
                                long count, float *out, long out_stride) {                                  \
        const uint8_t *block = (const uint8_t *)row;                                                        \
        const __m256i low_mask = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(3);                   \
        const long n = count / 32;                                                                          \
        __m256 sum0[TOKENS], sum1[TOKENS], offsets[TOKENS];                                                 \
        for (int t = 0; t < (TOKENS); t++) sum0[t] = sum1[t] = offsets[t] = _mm256_setzero_ps();            \
        for (long b = 0; b < count / 256; b++, block += 210) {                                              \
            prefetch_weights_ahead(block, 210);                                                             \
            const __m256 d = _mm256_set1_ps(half_to_float(block + 208));                                    \
            const __m128i all_scales = _mm_loadu_si128((const __m128i *)(block + 192));                     \
            const __m256 first_scales = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(all_scales))); \
            const __m256 second_scales = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(all_scales, 8)))); \
            for (int t = 0; t < (TOKENS); t++) {                                                            \
                const float *half_sums = sums + 3 * t * n + n + 16 * b;                                     \
                offsets[t] = _mm256_fmadd_ps(first_scales, _mm256_loadu_ps(half_sums), offsets[t]);         \
                offsets[t] = _mm256_fmadd_ps(second_scales, _mm256_loadu_ps(half_sums + 8), offsets[t]);    \
            }                                                                                               \
            for (int half = 0; half < 2; half++) {                                                          \
                __m256i weights[4];                                                                         \
                q6_k_half_weights(block, half, low_mask, two_bits, weights);                                \
                const long first = 8 * b + 4 * half;                                                        \
                const __m128i sub_scales = _mm_loadl_epi64((const __m128i *)(block + 192 + 8 * half));      \
                const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sub_scales)), d); \
                for (int t = 0; t < (TOKENS); t++) {                                                        \
                    const __m256 combined = _mm256_mul_ps(scaled, activation_scales_by_sub_block(scales + t * n + first)); \
                    for (int group = 0; group < 4; group++) {                                               \
                        const __m256i activations = _mm256_loadu_si256((const __m256i *)(values + t * count + 32 * (first + group))); \
                        const __m256 products = _mm256_cvtepi32_ps(PRODUCTS(weights[group], activations));  \
                        if (group & 1) sum1[t] = _mm256_fmadd_ps(sub_block_pair(combined, group), products, sum1[t]); \
                        else sum0[t] = _mm256_fmadd_ps(sub_block_pair(combined, group), products, sum0[t]); \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
        for (int t = 0; t < (TOKENS); t++)                                                                  \
            out[t * out_stride] = horizontal_sum(_mm256_fnmadd_ps(_mm256_set1_ps(32.0f), offsets[t], _mm256_add_ps(sum0[t], sum1[t]))); \
    }

DEFINE_Q8_DOT_AND_TOKENS(dot_q6_k_q8, DEFINE_Q6_K_Q8_KERNEL)

static void levels_q6_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 210, levels += 256, scales += 16, mins += 16) {
        const float d = half_to_float(block + 208);
        const int8_t *group_scales = (const int8_t *)(block + 192);
        for (int g = 0; g < 16; g++) {
            scales[g] = d * (float)group_scales[g];
            mins[g] = -32.0f * scales[g];
        }
        // Each half: weights l, l + 32, l + 64, l + 96 take the low nibble of low[l], of
        // low[l + 32], the high nibble of low[l], of low[l + 32], and bit pairs 0, 1, 2, 3 of high[l].
        for (int half = 0; half < 2; half++) {
            const __m256i first = _mm256_loadu_si256((const __m256i *)(block + 64 * half));
            const __m256i second = _mm256_loadu_si256((const __m256i *)(block + 64 * half + 32));
            const __m256i high = _mm256_loadu_si256((const __m256i *)(block + 128 + 32 * half));
            const __m256i sources[4] = {byte_bits(first, 0, 0x0F), byte_bits(second, 0, 0x0F), byte_bits(first, 4, 0x0F), byte_bits(second, 4, 0x0F)};
            for (int part = 0; part < 4; part++)
                _mm256_storeu_si256((__m256i *)(levels + 128 * half + 32 * part),
                                    _mm256_or_si256(sources[part], _mm256_slli_epi16(byte_bits(high, 2 * part, 3), 4)));
        }
    }
}
