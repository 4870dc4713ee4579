#ifndef LUMEN_CKERNELS_H
#define LUMEN_CKERNELS_H

#include "KernelLayout.h"

/// The compute kernels: dot products of weight rows with activations, matrix products, 8-bit
/// activation quantization, attention, the quantizer's scale searches. Written once with AVX2,
/// FMA and F16C intrinsics, compiled twice (see Dispatch.c): natively for x86-64-v3 CPUs and
/// through SIMDe for every other CPU; the variant the CPU can run is chosen when the program
/// loads. Block layouts are llama.cpp's; quantized `count`s are multiples of 32.

/// "avx2" or "portable": the kernel variant this process runs.
const char *lumen_kernel_variant(void);

/// F32 row · x (any count).
float lumen_dot_f32(const void *row, const float *x, long count);
/// BF16 row · x (any count).
float lumen_dot_bf16(const void *row, const float *x, long count);

/// Q8_0 row (34-byte blocks: F16 scale, 32 int8) · x.
float lumen_dot_q8_0(const void *row, const float *x, long count);
/// Q4_0 row (18-byte blocks: F16 scale, 16 bytes of nibbles) · x.
float lumen_dot_q4_0(const void *row, const float *x, long count);
float lumen_dot_q4_1(const void *row, const float *x, long count);
/// F16 row · x (any count).
float lumen_dot_f16(const void *row, const float *x, long count);

/// Quantizes `count` floats (a multiple of 32) to 8 bits in blocks of 32, as llama.cpp's Q8_0:
/// one float scale per block (max |x| / 127) and rounded int8 values; `sums` (room for
/// 3 · count / 32 floats) gets each block's scale times the sum of its values (what Q4_0's offset
/// of 8 costs), then the same for each half block of 16 (what Q2_K's and Q3_K's sub-blocks need).
void lumen_quantize_q8(const float *x, long count, signed char *values, float *scales, float *sums);
/// Q8_0 row · 8-bit activations from `lumen_quantize_q8`, with integer products.
float lumen_dot_q8_0_q8(const void *row, const signed char *values, const float *scales, long count);
/// Q4_0 row · 8-bit activations from `lumen_quantize_q8`, with integer products (AVX-512 VNNI
/// when the CPU has it and `without_vnni` is 0, else AVX2).
float lumen_dot_q4_0_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
float lumen_dot_q4_1_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);

/// `out[t * out_stride + r] = w[r] · x[t]` for `rows` weight rows (`row_stride` floats apart) and
/// `tokens` input vectors of `k` floats (`k` floats apart): a matrix–matrix product tiled as 3
/// rows × 4 tokens in registers, so each loaded weight meets four inputs, over blocks of tokens
/// whose inputs stay in L2.
void lumen_matmul_f32(const float *w, long row_stride, long rows, const float *x, long tokens, long k,
                      float *out, long out_stride);
/// Q8_0 row of `count` weights as floats.
void lumen_dequantize_q8_0(const void *row, float *out, long count);
/// Q4_0 row of `count` weights as floats.
void lumen_dequantize_q4_0(const void *row, float *out, long count);
void lumen_dequantize_q4_1(const void *row, float *out, long count);
void lumen_dequantize_q5_1(const void *row, float *out, long count);
void lumen_dequantize_q2_k(const void *row, float *out, long count);
void lumen_dequantize_q3_k(const void *row, float *out, long count);
void lumen_dequantize_iq4_nl(const void *row, float *out, long count);
void lumen_dequantize_iq4_xs(const void *row, float *out, long count);
/// Row · x for a format with only a dequantization kernel (blocks of at most 256 weights).
float lumen_dot_by_dequantizing(void (*dequantize)(const void *, float *, long), long block_size, long block_bytes,
                                const void *row, const float *x, long count);

/// Q5_0, Q4_K, Q5_K or Q6_K row of `count` weights as floats, computed as ggml does (Q5_0:
/// 22-byte blocks of 32; Q4_K 144, Q5_K 176 and Q6_K 210-byte blocks of 256).
void lumen_dequantize_q5_0(const void *row, float *out, long count);
void lumen_dequantize_q4_k(const void *row, float *out, long count);
void lumen_dequantize_q5_k(const void *row, float *out, long count);
void lumen_dequantize_q6_k(const void *row, float *out, long count);

/// Q5_0, Q4_K, Q5_K or Q6_K row · F32 activations, widening one block at a time (exact path).
float lumen_dot_q5_0(const void *row, const float *x, long count);
float lumen_dot_q4_k(const void *row, const float *x, long count);
float lumen_dot_q5_k(const void *row, const float *x, long count);
float lumen_dot_q6_k(const void *row, const float *x, long count);

/// Q5_0, Q4_K or Q5_K row · 8-bit activations from `lumen_quantize_q8` (blocks of 32, so each
/// 32-weight K-quant sub-block meets one activation block), with integer products: AVX-512 VNNI
/// when the CPU has it and `without_vnni` is 0, else AVX2.
float lumen_dot_q5_0_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
float lumen_dot_q4_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
float lumen_dot_q5_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
/// Q6_K row · 8-bit activations, integer products per four weights scaled by their 16-weight
/// sub-block's scale (AVX-512 VNNI when the CPU has it and `without_vnni` is 0, else AVX2).
float lumen_dot_q6_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);

/// Q5_1 row · 8-bit activations from `lumen_quantize_q8`: d · s · Σ q·v + m · (s · Σ v) per block.
float lumen_dot_q5_1_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
/// IQ4_NL or IQ4_XS row · 8-bit activations, the nibbles' signed values looked up in registers.
float lumen_dot_iq4_nl_q8(const void *row, const signed char *values, const float *scales, long count, int without_vnni);
float lumen_dot_iq4_xs_q8(const void *row, const signed char *values, const float *scales, long count, int without_vnni);
/// Q2_K or Q3_K row · 8-bit activations: integer products in lanes of four weights, each lane
/// scaled by its 16-weight sub-block's scale; the offsets (Q2_K's mins, Q3_K's 4) meet the half
/// sums `lumen_quantize_q8` writes after the block sums.
float lumen_dot_q2_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);
float lumen_dot_q3_k_q8(const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni);

/// Decodes `count` weights of a quantized row as levels: `w[i] = scales[i / 16] · levels[i] +
/// mins[i / 16]`, exactly (each format's offset folded into `mins`).
typedef void (*lumen_levels_fn)(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q8_0(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q4_0(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q4_1(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q5_0(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q5_1(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q2_k(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q3_k(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q4_k(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q5_k(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_q6_k(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_iq4_nl(const void *row, unsigned char *levels, float *scales, float *mins, long count);
void lumen_levels_iq4_xs(const void *row, unsigned char *levels, float *scales, float *mins, long count);

/// Quantizes `tokens` vectors of `k` floats as `lumen_quantize_q8` does, for
/// `lumen_matmul_levels_q8`: in chunks of `LUMEN_TOKEN_CHUNK` (8) tokens, the last padded with
/// zero tokens, each `8k` values, `8 · k / 32` scales and `3 · 8 · k / 32` sums. In a chunk,
/// token u's values 16g…16g + 15 are at `128g + 16u`, its scale of block b at `8b + u`, its sum
/// of block b at `8b + u` and then its sum of half block h at `8 · k / 32 + 8h + u`.
void lumen_quantize_q8_tokens(const float *x, long tokens, long k, signed char *values, float *scales, float *sums);
/// Bytes of workspace `lumen_matmul_levels_q8` needs for rows of `k` weights.
long lumen_matmul_levels_workspace(long k);
/// `out[t * out_stride + r] = w[r] · x[t]` for `rows` weight rows of any format with a levels
/// decoder and `tokens` vectors quantized by `lumen_quantize_q8_tokens`: rows decoded
/// eight at a time into `workspace` and multiplied in integers (AVX-512 VNNI when the CPU has it
/// and `without_vnni` is 0, else AVX2).
void lumen_matmul_levels_q8(lumen_levels_fn decode, const void *w, long row_bytes, long rows, const signed char *values,
                            const float *scales, const float *sums, long tokens, long k, float *out, long out_stride,
                            void *workspace, int without_vnni);

/// Writes the `8 * groups` rows of `blocks` blocks of `block_bytes` bytes at `rows` (`row_bytes`
/// apart) to `out` eight at a time, group after group, block column after block column: in each,
/// the eight rows' `halves` leading 2-byte fields side by side, field after field, then their
/// 4-byte pieces likewise (Interleaved.c draws Q4_0's and Q4_K's columns). Takes exactly the
/// rows' bytes.
void lumen_interleave_rows(const void *rows, long row_bytes, long groups, long blocks, long block_bytes, long halves, void *out);
/// Writes the `8 * group_count` rows interleaved at `groups` by `lumen_interleave_rows` back one
/// after another, byte for byte as it read them.
void lumen_restore_rows(const void *groups, long group_count, long blocks, long block_bytes, long halves, void *rows);
/// `out[r] = w[r] · x` for the `8 * group_count` Q4_0 (or Q4_K) rows interleaved at `groups` by
/// `lumen_interleave_rows` (with one leading 2-byte field, or two) and one vector quantized by
/// `lumen_quantize_q8`: each group's eight rows at once, one per lane (AVX-512 VNNI when the CPU
/// has it and `without_vnni` is 0, else AVX2).
void lumen_dot_q4_0_x8_q8(const void *groups, long group_count, const signed char *values, const float *scales,
                          const float *sums, long count, float *out, int without_vnni);
void lumen_dot_q4_k_x8_q8(const void *groups, long group_count, const signed char *values, const float *scales,
                          const float *sums, long count, float *out, int without_vnni);

/// One query head's attention over cached positions `[first, length)` of an F32 (or F16) cache
/// laid out `[position][stride]`, `keys` and `values` pointing at the head's `dim` values of
/// position 0: `scores[p]` = key · query · scale, softmax over them, and `out` = the
/// softmax-weighted sum of the values. `scores` needs room for `length` floats.
void lumen_attend_f32(const void *keys, const void *values, long stride, const float *query, long dim,
                      long first, long length, float scale, float *scores, float *out);
void lumen_attend_f16(const void *keys, const void *values, long stride, const float *query, long dim,
                      long first, long length, float scale, float *scores, float *out);
/// Four consecutive tokens' queries of one head at once (query j at `query + j * query_stride`,
/// attending to positions `[0, length + j)`, its output at `out + j * out_stride`), each cached
/// key and value read once for the four; otherwise as `lumen_attend_f32`. `dim` must be a multiple
/// of 8, and `scores` needs room for `3 * scores_stride + length + 3` floats.
void lumen_attend4_f32(const void *keys, const void *values, long stride, const float *query, long query_stride,
                       long dim, long length, float scale, float *scores, long scores_stride, float *out, long out_stride);
void lumen_attend4_f16(const void *keys, const void *values, long stride, const float *query, long query_stride,
                       long dim, long length, float scale, float *scores, long scores_stride, float *out, long out_stride);
/// Writes `count` floats into a cache of that type (F16: rounded to nearest).
void lumen_store_f32(const float *x, void *out, long count);
void lumen_store_f16(const float *x, void *out, long count);

/// Reads `bytes` (a multiple of 128) from `p` with 256-bit loads and returns their XOR folded to
/// 64 bits, so the reads cannot be optimised away: the memory-bandwidth probe.
unsigned long long lumen_read_bytes(const void *p, long bytes);

/// The K-quant scale search for one sub-block of `count` values (a multiple of 8): `value ≈ scale · level + offset`
/// with `level` in `0...levels` and `offset ≤ 0`, fitted by least squares weighted by `weights`
/// for 21 candidate scales; returns the scale of the fit with the smallest weighted squared error
/// and stores its offset (0 and the block's minimum when all values are equal).
float lumen_fit_affine(const float *x, const float *weights, int count, int levels, float *offset);
/// The symmetric scale search for one sub-block of `count` values (a multiple of 8): `value ≈ scale · level` with `level` in
/// `-max_level..<max_level`, weighting each value by its square, over 19 candidate scales;
/// returns 0 for an all-zero block.
float lumen_fit_symmetric(const float *x, int count, int max_level);

/// Tells the CPU this thread is spinning (x86 `pause`, Arm `yield`): the sibling hardware thread
/// gets the core's resources and the spin draws less power; a no-op elsewhere.
static inline void lumen_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#endif
