#ifndef LUMEN_KERNEL_LIST_H
#define LUMEN_KERNEL_LIST_H

// The one declaration of the kernels `CKernels` exports and of the format table's row. From the
// list come the exported prototypes (CKernels.h), each variant's table of entry points (each
// variant compiles the kernel bodies and fills one: Variant.c) and the exported functions that
// call through the table the process chose (Dispatch.c). Bodies include this header, not
// `CKernels.h`, whose prototypes would clash with their static definitions.

/// Decodes `count` weights of a quantized row as levels: `w[i] = scales[i / 16] · levels[i] +
/// mins[i / 16]`, exactly (each format's offset folded into `mins`).
typedef void (*lumen_levels_fn)(const void *row, unsigned char *levels, float *scales, float *mins, long count);

/// One tensor format's kernels, as ggml's `type_traits_cpu` (the rows: Formats.c). `count` is a
/// multiple of the format's block size; a null kernel is an operation the format does not have.
struct lumen_format_kernels {
    /// llama.cpp's name of the format ("Q4_K"), which Swift's `TensorFormat` looks it up by.
    const char *name;
    /// Writes `count` weights of a row as floats.
    void (*dequantize)(const void *row, float *out, long count);
    /// Row · `x`, exactly (F32 activations).
    float (*dot)(const void *row, const float *x, long count);
    /// Row · 8-bit activations from `lumen_quantize_q8`, with integer products: AVX-512 VNNI when
    /// the CPU has it and `without_vnni` is 0, else AVX2. Formats whose weights have no offset
    /// ignore `sums`.
    float (*dot_q8)(const void *row, const signed char *values, const float *scales, const float *sums, long count,
                    int without_vnni);
    /// `dot_q8` of `row_count` rows `row_bytes` apart with `tokens` tokens whose activations
    /// follow one another (token t's at `values + t * count`, `scales + t * count / 32`, `sums + 3 *
    /// t * count / 32`), row r's with token t into `out[t * out_stride + r]`: bit for bit `dot_q8`'s
    /// results, each row read once for several tokens. Every format with `dot_q8` has one.
    void (*dot_q8_tokens)(const void *rows, long row_bytes, long row_count, const signed char *values, const float *scales,
                          const float *sums, long count, long tokens, float *out, long out_stride, int without_vnni);
    /// `out[r] += (row r · x) × factor` for `row_count` rows `row_bytes` apart, each dot product
    /// `dot`'s to the bit and the product rounded before the sum: a low-rank adapter's `B (A x)`
    /// added to the rows it adapts. Only the formats that multiply with F32 activations (no
    /// `dot_q8`) have it.
    void (*add_scaled_dots)(const void *rows, long row_bytes, long row_count, const float *x, long count, float factor, float *out);
    /// The row decoder for `lumen_matmul_levels_q8` (prompt batches).
    lumen_levels_fn levels;
    /// With an eight-row layout for generation (`lumen_interleave_rows`): the leading 2-byte
    /// fields of a block, laid out field by field before its 4-byte pieces; 0 without one.
    long x8_leading_halves;
    /// `out[r]` = row r · one vector from `lumen_quantize_q8`, for the `8 * group_count` rows
    /// interleaved at `groups`, each group's eight rows at once, one per lane.
    void (*dot_x8_q8)(const void *groups, long group_count, const signed char *values, const float *scales,
                      const float *sums, long count, float *out, int without_vnni);
    /// `dot_x8_q8` for `tokens` tokens whose activations follow one another (as `dot_q8_tokens`
    /// takes them), token t's results into `out + t * out_stride`: bit for bit `dot_x8_q8`'s, each
    /// group read once for several tokens. Null: call `dot_x8_q8` per token.
    void (*dot_x8_q8_tokens)(const void *groups, long group_count, const signed char *values, const float *scales,
                             const float *sums, long count, long tokens, float *out, long out_stride, int without_vnni);
};

/// The kernels: `X(return type, name without lumen_, parameters, arguments)`, each after its
/// documentation.
#define LUMEN_KERNELS(X)                                                                                              \
    /* Row `index` of the format table (Formats.c), or null past its end. */                                          \
    X(const struct lumen_format_kernels *, format_kernels_at, (long index), (index))                                  \
    /* F32 `row` · `x` (any count). */                                                                                \
    X(float, dot_f32, (const void *row, const float *x, long count), (row, x, count))                                 \
    /* Quantizes `count` floats (a multiple of 32) to 8 bits in blocks of 32, as llama.cpp's Q8_0: one float scale    \
       per block (max |x| / 127) and rounded int8 values; `sums` (room for 3 · count / 32 floats) gets each block's    \
       scale times the sum of its values (what Q4_0's offset of 8 costs), then the same for each half block of 16     \
       (what Q2_K's and Q3_K's sub-blocks need). */                                                                   \
    X(void, quantize_q8, (const float *x, long count, signed char *values, float *scales, float *sums),               \
      (x, count, values, scales, sums))                                                                               \
    /* Quantizes `tokens` vectors of `k` floats as `lumen_quantize_q8` does, for `lumen_matmul_levels_q8`: in chunks  \
       of `LUMEN_TOKEN_CHUNK` (8) tokens, the last padded with zero tokens, each `8k` values, `8 · k / 32` scales and \
       `3 · 8 · k / 32` sums. In a chunk, token u's values 16g…16g + 15 are at `128g + 16u`, its scale of block b at  \
       `8b + u`, its sum of block b at `8b + u` and then its sum of half block h at `8 · k / 32 + 8h + u`. */          \
    X(void, quantize_q8_tokens, (const float *x, long tokens, long k, signed char *values, float *scales, float *sums), \
      (x, tokens, k, values, scales, sums))                                                                           \
    /* `out[t * out_stride + r] = w[r] · x[t]` for `rows` F32 weight rows (`row_stride` floats apart) and `tokens`    \
       input vectors of `k` floats (`k` floats apart): tiled as 3 rows × 4 tokens in registers, so each loaded weight \
       meets four inputs, over blocks of tokens whose inputs stay in L2. */                                           \
    X(void, matmul_f32, (const float *w, long row_stride, long rows, const float *x, long tokens, long k, float *out,  \
                         long out_stride),                                                                            \
      (w, row_stride, rows, x, tokens, k, out, out_stride))                                                           \
    /* `c = a · b` for `m` × `k` `a` and `k` × `n` `b`, any strides: a's (i, p) at `a[i * a_row + p * a_column]`,     \
       b's (p, j) at `b[p * b_row + j * b_column]`, c's (i, j) written at `c[i * c_row + j]`. Packed panels and       \
       register tiles (MatrixProduct.c), AVX-512 when the CPU has it and `without_avx512` (the tests' switch) is 0.   \
       Single-threaded: callers split `c` by columns or rows. */                                                      \
    X(void, matrix_product_f32, (long m, long n, long k, const float *a, long a_row, long a_column, const float *b,    \
                                 long b_row, long b_column, float *c, long c_row, int without_avx512),                \
      (m, n, k, a, a_row, a_column, b, b_row, b_column, c, c_row, without_avx512))                                    \
    /* Bytes of workspace `lumen_matmul_levels_q8` needs for rows of `k` weights. */                                  \
    X(long, matmul_levels_workspace, (long k), (k))                                                                   \
    /* `out[t * out_stride + r] = w[r] · x[t]` for `rows` weight rows of any format with a levels decoder and         \
       `tokens` vectors quantized by `lumen_quantize_q8_tokens`: rows decoded eight at a time into `workspace` and    \
       multiplied in integers (AVX-512 VNNI when the CPU has it and `without_vnni` is 0, else AVX2). */               \
    X(void, matmul_levels_q8, (lumen_levels_fn decode, const void *w, long row_bytes, long rows,                      \
                               const signed char *values, const float *scales, const float *sums, long tokens, long k, \
                               float *out, long out_stride, void *workspace, int without_vnni),                       \
      (decode, w, row_bytes, rows, values, scales, sums, tokens, k, out, out_stride, workspace, without_vnni))        \
    /* Writes the `8 * groups` rows of `blocks` blocks of `block_bytes` bytes at `rows` (`row_bytes` apart) to `out`  \
       eight at a time, group after group, block column after block column: in each, the eight rows' `halves`        \
       leading 2-byte fields side by side, field after field, then their 4-byte pieces likewise (Interleaved.c draws \
       Q4_0's, Q4_1's and Q4_K's columns). Takes exactly the rows' bytes. */                                                  \
    X(void, interleave_rows, (const void *rows, long row_bytes, long groups, long blocks, long block_bytes,            \
                              long halves, void *out),                                                                \
      (rows, row_bytes, groups, blocks, block_bytes, halves, out))                                                    \
    /* Writes the `8 * group_count` rows interleaved at `groups` by `lumen_interleave_rows` back one after another,   \
       byte for byte as it read them. */                                                                              \
    X(void, restore_rows, (const void *groups, long group_count, long blocks, long block_bytes, long halves,          \
                           void *rows),                                                                               \
      (groups, group_count, blocks, block_bytes, halves, rows))                                                       \
    /* One query head's attention over cached positions `[first, length)` of an F32 (F16, Q8_0) cache laid out       \
       `[position][stride]` (`stride` in the cache's units: elements, a Q8_0 cache's 32-value blocks), `keys` and     \
       `values` pointing at the head's `dim` values of position 0: `scores[p]` = key · query · scale, softmax over    \
       them and `sink` (an attention sink's score, which attends to nothing; −∞ for none), and `out` = the            \
       softmax-weighted sum of the values. `scores` needs room for `length` floats and is left with each position's   \
       exp(score − max); returns 1 / the softmax's total. */                                    \
    X(float, attend_f32, (const void *keys, const void *values, long stride, const float *query, long dim, long first, \
                          long length, float scale, float sink, float *scores, float *out),                           \
      (keys, values, stride, query, dim, first, length, scale, sink, scores, out))                                    \
    X(float, attend_f16, (const void *keys, const void *values, long stride, const float *query, long dim, long first, \
                          long length, float scale, float sink, float *scores, float *out),                           \
      (keys, values, stride, query, dim, first, length, scale, sink, scores, out))                                    \
    X(float, attend_q8_0, (const void *keys, const void *values, long stride, const float *query, long dim, long first, \
                           long length, float scale, float sink, float *scores, float *out),                          \
      (keys, values, stride, query, dim, first, length, scale, sink, scores, out))                                    \
    /* Four consecutive tokens' queries of one head at once (query j at `query + j * query_stride`, attending to      \
       positions `[0, length + j)`, its output at `out + j * out_stride`), each cached key and value read once for    \
       the four; otherwise as `lumen_attend_f32`. `dim` must be a multiple of 8, and `scores` needs room for          \
       `3 * scores_stride + length + 3` floats. */                                                                    \
    X(void, attend4_f32, (const void *keys, const void *values, long stride, const float *query, long query_stride,   \
                          long dim, long length, float scale, float sink, float *scores, long scores_stride, float *out, \
                          long out_stride),                                                                           \
      (keys, values, stride, query, query_stride, dim, length, scale, sink, scores, scores_stride, out, out_stride))  \
    X(void, attend4_f16, (const void *keys, const void *values, long stride, const float *query, long query_stride,   \
                          long dim, long length, float scale, float sink, float *scores, long scores_stride, float *out, \
                          long out_stride),                                                                           \
      (keys, values, stride, query, query_stride, dim, length, scale, sink, scores, scores_stride, out, out_stride))  \
    X(void, attend4_q8_0, (const void *keys, const void *values, long stride, const float *query, long query_stride,  \
                           long dim, long length, float scale, float sink, float *scores, long scores_stride, float *out, \
                           long out_stride),                                                                          \
      (keys, values, stride, query, query_stride, dim, length, scale, sink, scores, scores_stride, out, out_stride))  \
    /* log Σ e^x over `count` floats (the maximum taken out first; e^x eight at a time, within 1.3 ulp, summed in     \
       doubles): what turns a vocabulary's logits into log-probabilities, for every generated token. */               \
    X(float, log_sum_exp, (const float *x, long count), (x, count))                                                   \
    /* The softmax of `count` floats into `out` (which may be `x`): as NumPy's, e^(x − max) times 1 / their sum,    \
       eight at a time; with `*normalizer` given (a part of a longer row: log Σ e^x over all of it) e^(x − it); with  \
       `logarithmic` x − log Σ e^x (or x − `*normalizer`). A NaN anywhere gives NaN throughout, as NumPy's. */         \
    X(void, softmax_f32, (const float *x, long count, float *out, int logarithmic, const float *normalizer),          \
      (x, count, out, logarithmic, normalizer))                                                                       \
    /* Writes `count` floats into a cache of that type (F16: rounded to nearest; Q8_0: `count` a multiple of 32,      \
       quantized as ggml's CPU `quantize_row_q8_0`). */                                                               \
    X(void, store_f32, (const float *x, void *out, long count), (x, out, count))                                      \
    X(void, store_f16, (const float *x, void *out, long count), (x, out, count))                                      \
    X(void, store_q8_0, (const float *x, void *out, long count), (x, out, count))                                     \
    /* Reads `bytes` (a multiple of 128) from `p` with 256-bit loads and returns their XOR folded to 64 bits, so the  \
       reads cannot be optimised away: the memory-bandwidth probe. */                                                 \
    X(unsigned long long, read_bytes, (const void *p, long bytes), (p, bytes))                                        \
    /* The K-quant scale search for one sub-block of `count` values (a multiple of 8): `value ≈ scale · level +       \
       offset` with `level` in `0...levels` and `offset ≤ 0`, fitted by least squares weighted by `weights` for 21    \
       candidate scales; returns the scale of the fit with the smallest weighted squared error and stores its offset  \
       (0 and the block's minimum when all values are equal). */                                                     \
    X(float, fit_affine, (const float *x, const float *weights, int count, int levels, float *offset),                \
      (x, weights, count, levels, offset))                                                                            \
    /* The symmetric scale search for one sub-block of `count` values (a multiple of 8): `value ≈ scale · level`      \
       with `level` in `-max_level..<max_level`, weighting each value by its square, over 19 candidate scales;        \
       returns 0 for an all-zero block. */                                                                            \
    X(float, fit_symmetric, (const float *x, int count, int max_level), (x, count, max_level))

#endif
