#include "Shared.h"
#include "../CKernels/include/KernelLayout.h"

// MARK: - Rows as levels

// Every quantized format stores, for each group of 16 weights, w = scale · u + min with u a small
// unsigned integer (the 0–255 range covers them all: Q8_0's and IQ4's signed values are shifted
// by 128, Q3_K's by 4, Q6_K's are stored unsigned already). The decoders below write a row in
// that one shape, exactly: each format's own offsets move into `min`.

/// Writes `scale`, `min` for the two groups of 16 that a 32-weight block with one scale covers.
static inline void two_groups(float *scales, float *mins, long block, float scale, float min) {
    scales[2 * block] = scales[2 * block + 1] = scale;
    mins[2 * block] = mins[2 * block + 1] = min;
}

static void lumen_levels_q8_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 34, levels += 32) {
        const float d = half_to_float(block);
        for (int j = 0; j < 32; j++) levels[j] = (uint8_t)(block[2 + j] ^ 0x80);
        two_groups(scales, mins, b, d, -128.0f * d);
    }
}

/// Q4_0, Q4_1, Q5_0 and Q5_1: `nibbles` are weights 0–15 (low) and 16–31 (high), `high` their
/// fifth bits (or 0): bit i of `high` is spread to byte i (each byte picks its word byte with a
/// shuffle and tests its own bit).
static inline void nibble_levels(const uint8_t *nibbles, uint32_t high, uint8_t *levels) {
    const __m128i packed = _mm_loadu_si128((const __m128i *)nibbles), mask = _mm_set1_epi8(0x0F);
    const __m256i low = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), _mm_and_si128(packed, mask));
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)high),
                                               _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
    const __m256i bits = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits), _mm256_set1_epi8(0x10));
    _mm256_storeu_si256((__m256i *)levels, _mm256_or_si256(low, fifth));
}

static void lumen_levels_q4_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, levels += 32) {
        const float d = half_to_float(block);
        nibble_levels(block + 2, 0, levels);
        two_groups(scales, mins, b, d, -8.0f * d);
    }
}

static void lumen_levels_q4_1(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 20, levels += 32) {
        nibble_levels(block + 4, 0, levels);
        two_groups(scales, mins, b, half_to_float(block), half_to_float(block + 2));
    }
}

static void lumen_levels_q5_0(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 22, levels += 32) {
        const float d = half_to_float(block);
        uint32_t high;
        memcpy(&high, block + 2, 4);
        nibble_levels(block + 6, high, levels);
        two_groups(scales, mins, b, d, -16.0f * d);
    }
}

static void lumen_levels_q5_1(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 24, levels += 32) {
        uint32_t high;
        memcpy(&high, block + 4, 4);
        nibble_levels(block + 8, high, levels);
        two_groups(scales, mins, b, half_to_float(block), half_to_float(block + 2));
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

static void lumen_levels_q4_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 144, levels += 256, scales += 16, mins += 16)
        k_levels(block, NULL, block + 16, levels, scales, mins);
}

static void lumen_levels_q5_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 176, levels += 256, scales += 16, mins += 16)
        k_levels(block, block + 16, block + 48, levels, scales, mins);
}

static void lumen_levels_q6_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
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

static void lumen_levels_q2_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
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

static void lumen_levels_q3_k(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
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

/// IQ4 nibbles: sub-block values 0–15 (low) and 16–31 (high) of `nibbles`, shifted by 128.
static inline void iq4_levels(const uint8_t *nibbles, uint8_t *levels) {
    const __m128i table = _mm_add_epi8(_mm_loadu_si128((const __m128i *)lumen_iq4_values), _mm_set1_epi8((char)0x80));
    const __m128i packed = _mm_loadu_si128((const __m128i *)nibbles), mask = _mm_set1_epi8(0x0F);
    _mm_storeu_si128((__m128i *)levels, _mm_shuffle_epi8(table, _mm_and_si128(packed, mask)));
    _mm_storeu_si128((__m128i *)(levels + 16), _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(packed, 4), mask)));
}

static void lumen_levels_iq4_nl(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 32; b++, block += 18, levels += 32) {
        const float d = half_to_float(block);
        iq4_levels(block + 2, levels);
        two_groups(scales, mins, b, d, -128.0f * d);
    }
}

static void lumen_levels_iq4_xs(const void *row, unsigned char *levels, float *scales, float *mins, long count) {
    const uint8_t *block = (const uint8_t *)row;
    for (long b = 0; b < count / 256; b++, block += 136, scales += 16, mins += 16) {
        const float d = half_to_float(block);
        const uint16_t high = (uint16_t)(block[2] | block[3] << 8);
        for (int sub = 0; sub < 8; sub++, levels += 32) {
            const int scale = ((block[4 + sub / 2] >> (4 * (sub % 2))) & 0x0F) | (((high >> (2 * sub)) & 3) << 4);
            const float dl = d * (float)(scale - 32);
            iq4_levels(block + 8 + 16 * sub, levels);
            two_groups(scales, mins, sub, dl, -128.0f * dl);
        }
    }
}

// MARK: - The matrix–matrix product on levels

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

/// Rows decoded and interleaved eight at a time: for each group g of 16 weights, 128 bytes in
/// which the 32-byte chunk c holds weights 4c…4c+3 of rows 0…7 (4 bytes each, a 32-bit lane per
/// row), then the group's eight scales and eight mins. One `vpdpbusd` with a token's four
/// activations broadcast gives eight rows' partial sums.
enum { TILE_ROWS = 8 };

/// Decodes rows `[0, count)` (`count` ≤ 8) of `w` into the tile at `tile`, zero rows after.
static void build_tile(lumen_levels_fn decode, const uint8_t *w, long row_bytes, long count, long k,
                       uint8_t *tile, float *tile_scales, float *tile_mins, uint8_t *row_levels, float *row_scales, float *row_mins) {
    const long groups = k / 16;
    for (long r = 0; r < TILE_ROWS; r++) {
        if (r < count) {
            decode(w + r * row_bytes, row_levels, row_scales, row_mins, k);
        } else {
            memset(row_levels, 0, (size_t)k);
            for (long g = 0; g < groups; g++) row_scales[g] = row_mins[g] = 0.0f;
        }
        for (long g = 0; g < groups; g++) {
            for (int c = 0; c < 4; c++) memcpy(tile + 128 * g + 32 * c + 4 * r, row_levels + 16 * g + 4 * c, 4);
            tile_scales[TILE_ROWS * g + r] = row_scales[g];
            tile_mins[TILE_ROWS * g + r] = row_mins[g];
        }
    }
}

/// Eight rows' integer sums over one group against one token's 16 activations at `x`, as two
/// independent chains of two `vpdpbusd` (a chain of four would wait on each one's latency).
#define GROUP_SUMS_VNNI(w, x)                                                                            \
    _mm256_add_epi32(                                                                                     \
        _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), (w)[0], _mm256_set1_epi32(load_word((x)))), \
                            (w)[1], _mm256_set1_epi32(load_word((x) + 4))),                               \
        _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), (w)[2], _mm256_set1_epi32(load_word((x) + 8))), \
                            (w)[3], _mm256_set1_epi32(load_word((x) + 12))))

static inline int32_t load_word(const signed char *p) {
    int32_t word;
    memcpy(&word, p, 4);
    return word;
}

/// AVX2 has no unsigned × signed byte product into 32 bits; `vpmaddubsw` saturates at 16 bits
/// for levels above 63, so each level is split into its nibbles (15 · 127 · 2 fits) and the high
/// nibbles' sums weighted by 16.
__attribute__((always_inline)) static inline __m256i group_sums_avx2(const __m256i *w, const signed char *x) {
    const __m256i mask = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256i low = _mm256_setzero_si256(), high = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        const __m256i activations = _mm256_set1_epi32(load_word(x + 4 * c));
        low = _mm256_add_epi32(low, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(w[c], mask), activations), ones));
        high = _mm256_add_epi32(high, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(w[c], 4), mask), activations), ones));
    }
    return _mm256_add_epi32(low, _mm256_slli_epi32(high, 4));
}
#define GROUP_SUMS_AVX2(w, x) group_sums_avx2((w), (x))

/// Defines the tile kernel over spans of `SPAN` weights (16, or 32 when each pair of groups
/// shares its scale and min): eight rows × `TOKENS` tokens of a chunk (`lumen_quantize_q8_tokens`)
/// at a time, the tokens' accumulators in registers (a constant count, so the token loop unrolls,
/// and each token's activations, scale and sum lie at a constant offset from the span's). For each
/// span the eight rows' integer sums are scaled by the rows' scales times the token's block scale,
/// and the rows' mins times the token's sum over the span (block or half-block sum) are added.
#define DEFINE_LEVELS_TILE(NAME, ATTRIBUTES, GROUP_SUMS, TOKENS, SPAN)                                    \
    /* Tokens `[0, valid)` of the `TOKENS` at `values`, `scales` and `sums` (a chunk's, offset to the  \
       first); `out` is the first token's output. */                                                     \
    ATTRIBUTES static void NAME##_tokens(const uint8_t *tile, const float *tile_scales, const float *tile_mins, long k, \
                                         const signed char *values, const float *scales, const float *sums, \
                                         float *out, long out_stride, long rows, long valid) {            \
        const long groups = k / 16, blocks = k / 32;                                                      \
        __m256 acc[TOKENS];                                                                               \
        for (int u = 0; u < (TOKENS); u++) acc[u] = _mm256_setzero_ps();                                  \
        for (long g = 0; g < groups; g += (SPAN) / 16) {                                                  \
            __m256i w[4], next[4];                                                                        \
            for (int c = 0; c < 4; c++) w[c] = _mm256_loadu_si256((const __m256i *)(tile + 128 * g + 32 * c)); \
            if ((SPAN) == 32)                                                                             \
                for (int c = 0; c < 4; c++) next[c] = _mm256_loadu_si256((const __m256i *)(tile + 128 * (g + 1) + 32 * c)); \
            const __m256 row_scales = _mm256_loadu_ps(tile_scales + TILE_ROWS * g), row_mins = _mm256_loadu_ps(tile_mins + TILE_ROWS * g); \
            const signed char *x = values + TOKEN_CHUNK * 16 * g;                                         \
            const float *span_scales = scales + TOKEN_CHUNK * (g / 2);                                    \
            const float *span_sums = (SPAN) == 32 ? sums + TOKEN_CHUNK * (g / 2) : sums + TOKEN_CHUNK * (blocks + g); \
            _Pragma("clang loop unroll(full)")                                                            \
            for (int u = 0; u < (TOKENS); u++) {                                                          \
                __m256i integer = GROUP_SUMS(w, x + 16 * u);                                              \
                if ((SPAN) == 32) integer = _mm256_add_epi32(integer, GROUP_SUMS(next, x + TOKEN_CHUNK * 16 + 16 * u)); \
                const __m256 scaled = _mm256_mul_ps(row_scales, _mm256_set1_ps(span_scales[u]));         \
                acc[u] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(integer), scaled, acc[u]);                   \
                acc[u] = _mm256_fmadd_ps(row_mins, _mm256_set1_ps(span_sums[u]), acc[u]);                \
            }                                                                                             \
        }                                                                                                 \
        float lanes[TILE_ROWS];                                                                           \
        for (long u = 0; u < valid; u++) {                                                                \
            _mm256_storeu_ps(lanes, acc[u]);                                                              \
            for (long r = 0; r < rows; r++) out[u * out_stride + r] = lanes[r];                           \
        }                                                                                                 \
    }                                                                                                     \
    static void NAME(const uint8_t *tile, const float *tile_scales, const float *tile_mins, long k,        \
                     const signed char *values, const float *scales, const float *sums, long tokens,      \
                     float *out, long out_stride, long rows) {                                            \
        const long blocks = k / 32;                                                                       \
        for (long t = 0; t < tokens; t += (TOKENS)) {                                                     \
            const long chunk = t / TOKEN_CHUNK, first = t % TOKEN_CHUNK;                                  \
            NAME##_tokens(tile, tile_scales, tile_mins, k, values + TOKEN_CHUNK * k * chunk + 16 * first, \
                          scales + TOKEN_CHUNK * blocks * chunk + first, sums + 3 * TOKEN_CHUNK * blocks * chunk + first, \
                          out + t * out_stride, out_stride, rows, tokens - t < (TOKENS) ? tokens - t : (TOKENS)); \
        }                                                                                                 \
    }

DEFINE_LEVELS_TILE(levels_tile_avx2, , GROUP_SUMS_AVX2, 4, 16)
DEFINE_LEVELS_TILE(levels_pairs_avx2, , GROUP_SUMS_AVX2, 4, 32)
VNNI_VARIANT(DEFINE_LEVELS_TILE(levels_tile_vnni, VNNI_TARGET, GROUP_SUMS_VNNI, 8, 16))
VNNI_VARIANT(DEFINE_LEVELS_TILE(levels_pairs_vnni, VNNI_TARGET, GROUP_SUMS_VNNI, 8, 32))

/// Whether each pair of groups in the tile shares its scales and mins, so the kernel can take
/// spans of 32 (one scaling per 32 weights instead of two).
static int pairs_share_scales(const float *tile_scales, const float *tile_mins, long groups) {
    for (long g = 0; g < groups; g += 2)
        if (memcmp(tile_scales + TILE_ROWS * g, tile_scales + TILE_ROWS * (g + 1), TILE_ROWS * sizeof(float)) != 0 ||
            memcmp(tile_mins + TILE_ROWS * g, tile_mins + TILE_ROWS * (g + 1), TILE_ROWS * sizeof(float)) != 0)
            return 0;
    return 1;
}

static long lumen_matmul_levels_workspace(long k) {
    return (TILE_ROWS + 1) * k + (2 * TILE_ROWS + 2) * (k / 16) * (long)sizeof(float);
}

static void lumen_matmul_levels_q8(lumen_levels_fn decode, const void *w, long row_bytes, long rows, const signed char *values,
                            const float *scales, const float *sums, long tokens, long k, float *out, long out_stride,
                            void *workspace, int without_vnni) {
    const long groups = k / 16;
    uint8_t *tile = (uint8_t *)workspace, *row_levels = tile + TILE_ROWS * k;
    float *tile_scales = (float *)(row_levels + k);
    float *tile_mins = tile_scales + TILE_ROWS * groups, *row_scales = tile_mins + TILE_ROWS * groups, *row_mins = row_scales + groups;
    for (long r = 0; r < rows; r += TILE_ROWS) {
        const long count = rows - r < TILE_ROWS ? rows - r : TILE_ROWS;
        build_tile(decode, (const uint8_t *)w + r * row_bytes, row_bytes, count, k, tile, tile_scales, tile_mins, row_levels, row_scales, row_mins);
        const int pairs = pairs_share_scales(tile_scales, tile_mins, groups);
        if (pairs)
            CHOOSE_VNNI(without_vnni, levels_pairs_vnni(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count),
                        levels_pairs_avx2(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count));
        else
            CHOOSE_VNNI(without_vnni, levels_tile_vnni(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count),
                        levels_tile_avx2(tile, tile_scales, tile_mins, k, values, scales, sums, tokens, out + r, out_stride, count));
    }
}
