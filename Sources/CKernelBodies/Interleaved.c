#include "Shared.h"

// MARK: - Rows interleaved eight at a time

// A matrix–vector product row by row spends most of its instructions on each row's own scales:
// unpacking them, and a float conversion and multiply-add per 32 weights. With eight rows side by
// side, one `vpdpbusd` multiplies four weights of each of the eight rows by the same four
// activations, and every scale, conversion and multiply-add serves the eight rows at once, one
// row per lane (llama.cpp's CPU "repack" does the same). A block column of eight rows is the
// eight blocks' bytes rearranged, so it takes exactly what the rows take: each of the block's
// leading 2-byte fields (its F16 scales) of the eight rows side by side, field after field, then
// each of its 4-byte pieces of the eight rows side by side, piece after piece. So one 32-byte load
// holds the same four bytes of all eight rows. For the three formats with kernels:
//
//   Q4_0 (18 bytes, one field)   bytes 0–15 the rows' d; bytes 16–143 the nibbles, piece c (weights
//                                4c…4c + 3 low, 16 + 4c… high) of row r at 16 + 32c + 4r
//   Q4_1 (20 bytes, two fields)  bytes 0–15 the rows' d, 16–31 their m; bytes 32–159 the nibbles,
//                                piece c of row r at 32 + 32c + 4r
//   Q4_K (144 bytes, two fields) bytes 0–15 the rows' d, 16–31 their dmin; bytes 32–127 the 12
//                                bytes of packed 6-bit scales and mins as three words, word w of
//                                row r at 32 + 32w + 4r (the 32-bit masks of `k_scale_words` then
//                                unpack the eight rows at once); bytes 128–1151 the nibbles, piece
//                                c of 32-byte run p (sub-blocks 2p and 2p + 1) at 128 + 256p + 32c + 4r

// The eight-row kernels read a group's block columns in order, one stream the hardware prefetcher
// follows; unlike the row-by-row kernels they ask for no weights ahead (on two threads the hints
// cost bandwidth: BENCHMARKS.md, step 18).

/// Copies row `r`'s `block` into its places in the eight-row `column`, or back when `to_block`
/// is set: the one statement of the layout above.
static inline void x8_copy(uint8_t *block, uint8_t *column, int r, long block_bytes, long halves, int to_block) {
#define X8_MOVE(column_offset, block_offset, bytes)                                              \
    (to_block ? memcpy(block + (block_offset), column + (column_offset), bytes)                 \
              : memcpy(column + (column_offset), block + (block_offset), bytes))
    for (long field = 0; field < halves; field++) X8_MOVE(16 * field + 2 * r, 2 * field, 2);
    for (long piece = 0; piece < (block_bytes - 2 * halves) / 4; piece++)
        X8_MOVE(16 * halves + 32 * piece + 4 * r, 2 * halves + 4 * piece, 4);
#undef X8_MOVE
}

static void lumen_interleave_rows(const void *rows, long row_bytes, long groups, long blocks, long block_bytes, long halves,
                                  void *out) {
    uint8_t *column = (uint8_t *)out;
    for (long g = 0; g < groups; g++)
        for (long b = 0; b < blocks; b++, column += 8 * block_bytes)
            for (int r = 0; r < 8; r++)
                x8_copy((uint8_t *)rows + (8 * g + r) * row_bytes + block_bytes * b, column, r, block_bytes, halves, 0);
}

static void lumen_restore_rows(const void *groups, long group_count, long blocks, long block_bytes, long halves, void *rows) {
    uint8_t *column = (uint8_t *)groups;
    for (long g = 0; g < group_count; g++)
        for (long b = 0; b < blocks; b++, column += 8 * block_bytes)
            for (int r = 0; r < 8; r++)
                x8_copy((uint8_t *)rows + ((8 * g + r) * blocks + b) * block_bytes, column, r, block_bytes, halves, 1);
}

/// Bytes of one block column of eight interleaved Q4_K rows.
enum { Q4_K_X8_BLOCK_BYTES = 8 * 144 };

/// `k_scale_words` for the eight rows of a block column at once, from their three packed words
/// (`words`, 32 bytes per word): byte s of lane r of `scales[s / 4]` is row r's scale s, likewise
/// `mins`.
static inline void k_scale_lanes(const uint8_t *words, __m256i scales[2], __m256i mins[2]) {
    const __m256i word0 = _mm256_loadu_si256((const __m256i *)words);
    const __m256i word1 = _mm256_loadu_si256((const __m256i *)(words + 32));
    const __m256i word2 = _mm256_loadu_si256((const __m256i *)(words + 64));
    const __m256i six_bits = _mm256_set1_epi32(0x3F3F3F3F), four_bits = _mm256_set1_epi32(0x0F0F0F0F);
    const __m256i top_bits = _mm256_set1_epi32(0x30303030);
    scales[0] = _mm256_and_si256(word0, six_bits);
    scales[1] = _mm256_or_si256(_mm256_and_si256(word2, four_bits), _mm256_and_si256(_mm256_srli_epi32(word0, 2), top_bits));
    mins[0] = _mm256_and_si256(word1, six_bits);
    mins[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(word2, 4), four_bits),
                              _mm256_and_si256(_mm256_srli_epi32(word1, 2), top_bits));
}

/// Byte `index` of each 32-bit lane of `lanes`, as floats. (A variable shift: `index` is not a
/// constant where the portable build's NEON needs one; with the loops unrolled, x86 compiles it to
/// a shift by an immediate.)
static inline __m256 lane_byte(__m256i lanes, int index) {
    return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(lanes, _mm256_set1_epi32(8 * index)), _mm256_set1_epi32(0xFF)));
}

/// `acc` plus the products of unsigned bytes `u` and signed bytes `s` in int32 lanes of four.
#define ACCUMULATE_AVX2(acc, u, s) _mm256_add_epi32((acc), PRODUCTS_AVX2((u), (s)))
#define ACCUMULATE_VNNI(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))

/// The four chains both eight-row kernels run over `PIECES` 4-byte nibble pieces of eight rows at
/// `pieces` (32 bytes apart): the low nibbles meet the activations at `low_x`, the high ones those
/// at `high_x`, even and odd pieces in chains of their own (`low0`/`high0`, `low1`/`high1`).
#define ACCUMULATE_NIBBLE_PIECES(ACCUMULATE, PIECES, pieces, low_mask, low_x, high_x, low0, low1, high0, high1) \
    for (int piece = 0; piece < (PIECES); piece += 2) {                                                      \
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)((pieces) + 32 * piece));                    \
        const __m256i w1 = _mm256_loadu_si256((const __m256i *)((pieces) + 32 * piece + 32));               \
        low0 = ACCUMULATE(low0, _mm256_and_si256(w0, low_mask), _mm256_set1_epi32(load_word((low_x) + 4 * piece))); \
        high0 = ACCUMULATE(high0, _mm256_and_si256(_mm256_srli_epi16(w0, 4), low_mask),                     \
                           _mm256_set1_epi32(load_word((high_x) + 4 * piece)));                               \
        low1 = ACCUMULATE(low1, _mm256_and_si256(w1, low_mask), _mm256_set1_epi32(load_word((low_x) + 4 * piece + 4))); \
        high1 = ACCUMULATE(high1, _mm256_and_si256(_mm256_srli_epi16(w1, 4), low_mask),                     \
                           _mm256_set1_epi32(load_word((high_x) + 4 * piece + 4)));                           \
    }

/// The signature of an eight-row kernel `NAME` compiled with `ATTRIBUTES`: `group_count` groups
/// of eight interleaved rows at `groups` times one row of `count` 8-bit activations (`values`,
/// with each block's scale and sum), eight results per group into `out`.
#define X8_KERNEL_SIGNATURE(NAME, ATTRIBUTES)                                                                    \
    ATTRIBUTES static void NAME(const void *groups, long group_count, const signed char *values,             \
                                const float *scales, const float *sums, long count, float *out)

/// The signature of an eight-row kernel `NAME` for several tokens whose activations follow one
/// another (token t's at `values + t * count`, `scales + t * count / 32`, `sums + 3 * t * count /
/// 32`), token t's eight results per group into `out + t * out_stride`.
#define X8_TOKENS_KERNEL_SIGNATURE(NAME, ATTRIBUTES)                                                             \
    ATTRIBUTES static void NAME(const void *groups, long group_count, const signed char *values, const float *scales, \
                                const float *sums, long count, float *out, long out_stride)

/// Defines `NAME`, a format's eight-row product (its row's `dot_x8_q8`), from `DEFINE(NAME,
/// ATTRIBUTES, ACCUMULATE)`: the AVX2 kernel, the AVX-512 VNNI one where the build has it, and the
/// choice between them at each call.
#define DEFINE_X8_DOT(NAME, DEFINE)                                                                              \
    DEFINE(NAME##_avx2, , ACCUMULATE_AVX2)                                                                       \
    VNNI_VARIANT(DEFINE(NAME##_vnni, VNNI_TARGET, ACCUMULATE_VNNI))                                              \
    static void NAME(const void *groups, long group_count, const signed char *values, const float *scales,      \
                     const float *sums, long count, float *out, int without_vnni) {                             \
        CHOOSE_VNNI(without_vnni, NAME##_vnni(groups, group_count, values, scales, sums, count, out),            \
                    NAME##_avx2(groups, group_count, values, scales, sums, count, out));                         \
    }

/// Defines the eight-row kernel `NAME` with `ACCUMULATE`, compiled with `ATTRIBUTES`. Per block
/// column and pair of sub-blocks, four chains of `ACCUMULATE` (low and high nibbles, even and odd
/// pieces) gather each row's integer sums in its lane; each sub-block's sums are then scaled by
/// the rows' scales × the activation block's scale, and the block's by the rows' d, while the
/// rows' mins meet the activation sums and dmin.
#define DEFINE_Q4_K_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE)                                                   \
    X8_KERNEL_SIGNATURE(NAME, ATTRIBUTES) {                                                                   \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const uint8_t *column = (const uint8_t *)groups;                                                     \
        for (long g = 0; g < group_count; g++, out += 8) {                                                   \
            __m256 total = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();                              \
            for (long b = 0; b < count / 256; b++, column += Q4_K_X8_BLOCK_BYTES) {                          \
                const signed char *x = values + 256 * b;                                                     \
                const float *x_scales = scales + 8 * b, *x_sums = sums + 8 * b;                              \
                __m256 block_sum = _mm256_setzero_ps(), block_mins = _mm256_setzero_ps();                    \
                __m256i scale_words[2], min_words[2];                                                        \
                k_scale_lanes(column + 32, scale_words, min_words);                                          \
                for (int pair = 0; pair < 4; pair++) {                                                       \
                    const uint8_t *pieces = column + 128 + 256 * pair;                                       \
                    const signed char *low_x = x + 64 * pair, *high_x = low_x + 32;                          \
                    __m256i low0 = _mm256_setzero_si256(), low1 = _mm256_setzero_si256();                    \
                    __m256i high0 = _mm256_setzero_si256(), high1 = _mm256_setzero_si256();                  \
                    ACCUMULATE_NIBBLE_PIECES(ACCUMULATE, 8, pieces, low_mask, low_x, high_x, low0, low1, high0, high1) \
                    for (int half = 0; half < 2; half++) {                                                   \
                        const int sub = 2 * pair + half;                                                     \
                        const __m256i sums_i = half ? _mm256_add_epi32(high0, high1) : _mm256_add_epi32(low0, low1); \
                        const __m256 sub_scales = lane_byte(scale_words[sub / 4], sub % 4);                  \
                        const __m256 sub_mins = lane_byte(min_words[sub / 4], sub % 4);                      \
                        block_sum = _mm256_fmadd_ps(_mm256_mul_ps(sub_scales, _mm256_set1_ps(x_scales[sub])), \
                                                    _mm256_cvtepi32_ps(sums_i), block_sum);                  \
                        block_mins = _mm256_fmadd_ps(sub_mins, _mm256_set1_ps(x_sums[sub]), block_mins);     \
                    }                                                                                        \
                }                                                                                            \
                total = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)column)), block_sum, total); \
                offsets = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(column + 16))), block_mins, offsets); \
            }                                                                                                \
            _mm256_storeu_ps(out, _mm256_sub_ps(total, offsets));                                            \
        }                                                                                                    \
    }

DEFINE_X8_DOT(dot_q4_k_x8_q8, DEFINE_Q4_K_X8_KERNEL)

/// `DEFINE_Q4_K_X8_KERNEL` for `TOKENS` tokens whose activations follow one another (see
/// `DEFINE_NIBBLE_X8_TOKENS_KERNEL`): each 32-byte piece of nibbles loaded and split, and each
/// block column's scales and mins unpacked, once for all the tokens. A token's integer sums take
/// one chain per sub-block (exact whatever the chains), and its float operations are the one-token
/// kernel's in its order (the mins' multiply-adds, which do not depend on the products, after the
/// sub-blocks rather than between them), so the results are bit for bit.
#define DEFINE_Q4_K_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS)                                     \
    X8_TOKENS_KERNEL_SIGNATURE(NAME, ATTRIBUTES) {                                                            \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const uint8_t *column = (const uint8_t *)groups;                                                     \
        const long n = count / 32;                                                                           \
        for (long g = 0; g < group_count; g++, out += 8) {                                                   \
            __m256 total[TOKENS], offsets[TOKENS];                                                           \
            for (int t = 0; t < (TOKENS); t++) total[t] = offsets[t] = _mm256_setzero_ps();                  \
            for (long b = 0; b < count / 256; b++, column += Q4_K_X8_BLOCK_BYTES) {                          \
                __m256 block_sum[TOKENS];                                                                    \
                for (int t = 0; t < (TOKENS); t++) block_sum[t] = _mm256_setzero_ps();                       \
                __m256i scale_words[2], min_words[2];                                                        \
                k_scale_lanes(column + 32, scale_words, min_words);                                          \
                for (int pair = 0; pair < 4; pair++) {                                                       \
                    const uint8_t *pieces = column + 128 + 256 * pair;                                       \
                    __m256i low[TOKENS], high[TOKENS];                                                       \
                    for (int t = 0; t < (TOKENS); t++) low[t] = high[t] = _mm256_setzero_si256();            \
                    for (int piece = 0; piece < 8; piece++) {                                                \
                        const __m256i w = _mm256_loadu_si256((const __m256i *)(pieces + 32 * piece));        \
                        const __m256i low_w = _mm256_and_si256(w, low_mask);                                 \
                        const __m256i high_w = _mm256_and_si256(_mm256_srli_epi16(w, 4), low_mask);          \
                        for (int t = 0; t < (TOKENS); t++) {                                                 \
                            const signed char *x = values + t * count + 256 * b + 64 * pair + 4 * piece;     \
                            low[t] = ACCUMULATE(low[t], low_w, _mm256_set1_epi32(load_word(x)));             \
                            high[t] = ACCUMULATE(high[t], high_w, _mm256_set1_epi32(load_word(x + 32)));     \
                        }                                                                                    \
                    }                                                                                        \
                    for (int half = 0; half < 2; half++) {                                                   \
                        const int sub = 2 * pair + half;                                                     \
                        const __m256 sub_scales = lane_byte(scale_words[sub / 4], sub % 4);                  \
                        for (int t = 0; t < (TOKENS); t++)                                                   \
                            block_sum[t] = _mm256_fmadd_ps(_mm256_mul_ps(sub_scales, _mm256_set1_ps(scales[t * n + 8 * b + sub])), \
                                                           _mm256_cvtepi32_ps(half ? high[t] : low[t]), block_sum[t]); \
                    }                                                                                        \
                }                                                                                            \
                const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)column));                  \
                const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(column + 16)));        \
                for (int t = 0; t < (TOKENS); t++) {                                                         \
                    __m256 block_mins = _mm256_setzero_ps();                                                 \
                    for (int sub = 0; sub < 8; sub++)                                                        \
                        block_mins = _mm256_fmadd_ps(lane_byte(min_words[sub / 4], sub % 4),                 \
                                                     _mm256_set1_ps(sums[3 * t * n + 8 * b + sub]), block_mins); \
                    total[t] = _mm256_fmadd_ps(d, block_sum[t], total[t]);                                   \
                    offsets[t] = _mm256_fmadd_ps(dmin, block_mins, offsets[t]);                              \
                }                                                                                            \
            }                                                                                                \
            for (int t = 0; t < (TOKENS); t++) _mm256_storeu_ps(out + t * out_stride, _mm256_sub_ps(total[t], offsets[t])); \
        }                                                                                                    \
    }

/// Defines the eight-row kernel `NAME`, with `ACCUMULATE` and compiled with `ATTRIBUTES`, of a
/// format whose 32-weight blocks are `BLOCK_BYTES` bytes: `HALVES` F16 fields (d first), then 16
/// bytes of nibbles. Per block column, four chains of `ACCUMULATE` (low and high nibbles, even and
/// odd pieces) gather each row's integer sum of nibble × activation in its lane; the sums are
/// scaled by the rows' d × the activation block's scale into `total`, and the rows' F16 field
/// `OFFSET_FIELD` meets the activation block's sum in `offsets`, which `FINISH(total, offsets)`
/// applies at the end: Q4_0 takes off the 8 · d · sum(activations) each row owes for its nibbles'
/// offset, Q4_1 adds its rows' m · sum(activations).
#define DEFINE_NIBBLE_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, BLOCK_BYTES, HALVES, OFFSET_FIELD, FINISH)       \
    X8_KERNEL_SIGNATURE(NAME, ATTRIBUTES) {                                                                   \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const uint8_t *column = (const uint8_t *)groups;                                                     \
        for (long g = 0; g < group_count; g++, out += 8) {                                                   \
            __m256 total = _mm256_setzero_ps(), offsets = _mm256_setzero_ps();                              \
            for (long b = 0; b < count / 32; b++, column += 8 * (BLOCK_BYTES)) {                             \
                const signed char *x = values + 32 * b;                                                      \
                __m256i low0 = _mm256_setzero_si256(), low1 = _mm256_setzero_si256();                        \
                __m256i high0 = _mm256_setzero_si256(), high1 = _mm256_setzero_si256();                      \
                ACCUMULATE_NIBBLE_PIECES(ACCUMULATE, 4, column + 16 * (HALVES), low_mask, x, x + 16, low0, low1, high0, high1) \
                const __m256i block_sums = _mm256_add_epi32(_mm256_add_epi32(low0, low1), _mm256_add_epi32(high0, high1)); \
                const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)column));                  \
                const __m256 field = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(column + 16 * (OFFSET_FIELD)))); \
                total = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(scales[b])), _mm256_cvtepi32_ps(block_sums), total); \
                offsets = _mm256_fmadd_ps(field, _mm256_set1_ps(sums[b]), offsets);                          \
            }                                                                                                \
            _mm256_storeu_ps(out, FINISH(total, offsets));                                                   \
        }                                                                                                    \
    }

/// `DEFINE_NIBBLE_X8_KERNEL` for `TOKENS` tokens (`X8_TOKENS_KERNEL_SIGNATURE`): each 32-byte piece
/// of nibbles loaded and split once for all the tokens. Each token's integer sums are exact whatever the chains, and its
/// float operations are the one-token kernel's, in its order, so the results are bit for bit.
#define DEFINE_NIBBLE_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS, BLOCK_BYTES, HALVES, OFFSET_FIELD, FINISH) \
    X8_TOKENS_KERNEL_SIGNATURE(NAME, ATTRIBUTES) {                                                            \
        const __m256i low_mask = _mm256_set1_epi8(0x0F);                                                     \
        const uint8_t *column = (const uint8_t *)groups;                                                     \
        const long n = count / 32;                                                                           \
        for (long g = 0; g < group_count; g++, out += 8) {                                                   \
            __m256 total[TOKENS], offsets[TOKENS];                                                           \
            for (int t = 0; t < (TOKENS); t++) total[t] = offsets[t] = _mm256_setzero_ps();                  \
            for (long b = 0; b < n; b++, column += 8 * (BLOCK_BYTES)) {                                      \
                const uint8_t *pieces = column + 16 * (HALVES);                                              \
                __m256i block_sums[TOKENS];                                                                  \
                for (int t = 0; t < (TOKENS); t++) block_sums[t] = _mm256_setzero_si256();                   \
                for (int piece = 0; piece < 4; piece++) {                                                    \
                    const __m256i w = _mm256_loadu_si256((const __m256i *)(pieces + 32 * piece));            \
                    const __m256i low = _mm256_and_si256(w, low_mask);                                       \
                    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(w, 4), low_mask);                \
                    for (int t = 0; t < (TOKENS); t++) {                                                     \
                        const signed char *x = values + t * count + 32 * b;                                  \
                        block_sums[t] = ACCUMULATE(block_sums[t], low, _mm256_set1_epi32(load_word(x + 4 * piece))); \
                        block_sums[t] = ACCUMULATE(block_sums[t], high, _mm256_set1_epi32(load_word(x + 16 + 4 * piece))); \
                    }                                                                                        \
                }                                                                                            \
                const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)column));                  \
                const __m256 field = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(column + 16 * (OFFSET_FIELD)))); \
                for (int t = 0; t < (TOKENS); t++) {                                                         \
                    total[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(scales[t * n + b])),          \
                                               _mm256_cvtepi32_ps(block_sums[t]), total[t]);                  \
                    offsets[t] = _mm256_fmadd_ps(field, _mm256_set1_ps(sums[3 * t * n + b]), offsets[t]);      \
                }                                                                                            \
            }                                                                                                \
            for (int t = 0; t < (TOKENS); t++) _mm256_storeu_ps(out + t * out_stride, FINISH(total[t], offsets[t])); \
        }                                                                                                    \
    }

/// Defines `NAME`, a format's eight-row product for several tokens (its row's `dot_x8_q8_tokens`),
/// from `DEFINE(NAME, ATTRIBUTES, ACCUMULATE, TOKENS)`: `WIDE` tokens at a time, then two, then
/// the one-token kernel `SINGLE` for the last, AVX2 or AVX-512 VNNI as `SINGLE` chooses.
#define DEFINE_X8_TOKENS(NAME, DEFINE, WIDE, SINGLE)                                                             \
    DEFINE(NAME##_wide_avx2, , ACCUMULATE_AVX2, WIDE)                                                            \
    VNNI_VARIANT(DEFINE(NAME##_wide_vnni, VNNI_TARGET, ACCUMULATE_VNNI, WIDE))                                   \
    DEFINE(NAME##_pair_avx2, , ACCUMULATE_AVX2, 2)                                                               \
    VNNI_VARIANT(DEFINE(NAME##_pair_vnni, VNNI_TARGET, ACCUMULATE_VNNI, 2))                                      \
    static void NAME(const void *groups, long group_count, const signed char *values, const float *scales,      \
                     const float *sums, long count, long tokens, float *out, long out_stride, int without_vnni) { \
        const long blocks = count / 32;                                                                          \
        long t = 0;                                                                                              \
        for (; t + (WIDE) <= tokens; t += (WIDE)) {                                                              \
            const signed char *v = values + t * count;                                                           \
            const float *d = scales + t * blocks, *m = sums + 3 * t * blocks;                                    \
            CHOOSE_VNNI(without_vnni, NAME##_wide_vnni(groups, group_count, v, d, m, count, out + t * out_stride, out_stride), \
                        NAME##_wide_avx2(groups, group_count, v, d, m, count, out + t * out_stride, out_stride)); \
        }                                                                                                        \
        for (; t + 2 <= tokens; t += 2) {                                                                        \
            const signed char *v = values + t * count;                                                           \
            const float *d = scales + t * blocks, *m = sums + 3 * t * blocks;                                    \
            CHOOSE_VNNI(without_vnni, NAME##_pair_vnni(groups, group_count, v, d, m, count, out + t * out_stride, out_stride), \
                        NAME##_pair_avx2(groups, group_count, v, d, m, count, out + t * out_stride, out_stride)); \
        }                                                                                                        \
        for (; t < tokens; t++)                                                                                  \
            SINGLE(groups, group_count, values + t * count, scales + t * blocks, sums + 3 * t * blocks, count,    \
                   out + t * out_stride, without_vnni);                                                          \
    }

/// Q4_0 (18 bytes: d, nibbles) and Q4_1 (20 bytes: d, m, nibbles), see `DEFINE_NIBBLE_X8_KERNEL`.
#define Q4_0_FINISH(total, offsets) _mm256_fnmadd_ps(_mm256_set1_ps(8.0f), (offsets), (total))
#define Q4_1_FINISH(total, offsets) _mm256_add_ps((total), (offsets))
#define DEFINE_Q4_0_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE) DEFINE_NIBBLE_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, 18, 1, 0, Q4_0_FINISH)
#define DEFINE_Q4_1_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE) DEFINE_NIBBLE_X8_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, 20, 2, 1, Q4_1_FINISH)
#define DEFINE_Q4_0_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS) \
    DEFINE_NIBBLE_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS, 18, 1, 0, Q4_0_FINISH)
#define DEFINE_Q4_1_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS) \
    DEFINE_NIBBLE_X8_TOKENS_KERNEL(NAME, ATTRIBUTES, ACCUMULATE, TOKENS, 20, 2, 1, Q4_1_FINISH)

DEFINE_X8_DOT(dot_q4_0_x8_q8, DEFINE_Q4_0_X8_KERNEL)
DEFINE_X8_DOT(dot_q4_1_x8_q8, DEFINE_Q4_1_X8_KERNEL)
DEFINE_X8_TOKENS(dot_q4_0_x8_q8_tokens, DEFINE_Q4_0_X8_TOKENS_KERNEL, 4, dot_q4_0_x8_q8)
DEFINE_X8_TOKENS(dot_q4_1_x8_q8_tokens, DEFINE_Q4_1_X8_TOKENS_KERNEL, 4, dot_q4_1_x8_q8)
DEFINE_X8_TOKENS(dot_q4_k_x8_q8_tokens, DEFINE_Q4_K_X8_TOKENS_KERNEL, 4, dot_q4_k_x8_q8)
