#ifndef LUMEN_KERNEL_TABLE_H
#define LUMEN_KERNEL_TABLE_H

// The one list of the kernels `CKernels.h` exports: for each, its return type, its name without
// `lumen_`, its parameters and its arguments. From it come a variant's table of entry points
// (each variant target compiles the kernel bodies and fills one) and the exported functions that
// call through the table the process chose (Dispatch.c). A kernel added to `CKernels.h` is added
// here too; the compiler checks that the two agree.

/// Decodes `count` weights of a quantized row as levels (see `CKernels.h`).
typedef void (*lumen_levels_fn)(const void *row, unsigned char *levels, float *scales, float *mins, long count);

#define LUMEN_KERNELS(X) \
    X(float, dot_f32, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_bf16, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q8_0, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q4_0, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q4_1, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_f16, (const void *row, const float *x, long count), (row, x, count)) \
    X(void, quantize_q8, (const float *x, long count, signed char *values, float *scales, float *sums), (x, count, values, scales, sums)) \
    X(float, dot_q8_0_q8, (const void *row, const signed char *values, const float *scales, long count), (row, values, scales, count)) \
    X(float, dot_q4_0_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q4_1_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(void, matmul_f32, (const float *w, long row_stride, long rows, const float *x, long tokens, long k, float *out, long out_stride), (w, row_stride, rows, x, tokens, k, out, out_stride)) \
    X(void, dequantize_q8_0, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q4_0, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q4_1, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q5_1, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q2_k, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q3_k, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_iq4_nl, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_iq4_xs, (const void *row, float *out, long count), (row, out, count)) \
    X(float, dot_by_dequantizing, (void (*dequantize)(const void *, float *, long), long block_size, long block_bytes, const void *row, const float *x, long count), (dequantize, block_size, block_bytes, row, x, count)) \
    X(void, dequantize_q5_0, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q4_k, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q5_k, (const void *row, float *out, long count), (row, out, count)) \
    X(void, dequantize_q6_k, (const void *row, float *out, long count), (row, out, count)) \
    X(float, dot_q5_0, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q4_k, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q5_k, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q6_k, (const void *row, const float *x, long count), (row, x, count)) \
    X(float, dot_q5_0_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q4_k_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q5_k_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q6_k_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q5_1_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_iq4_nl_q8, (const void *row, const signed char *values, const float *scales, long count, int without_vnni), (row, values, scales, count, without_vnni)) \
    X(float, dot_iq4_xs_q8, (const void *row, const signed char *values, const float *scales, long count, int without_vnni), (row, values, scales, count, without_vnni)) \
    X(float, dot_q2_k_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(float, dot_q3_k_q8, (const void *row, const signed char *values, const float *scales, const float *sums, long count, int without_vnni), (row, values, scales, sums, count, without_vnni)) \
    X(void, levels_q8_0, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q4_0, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q4_1, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q5_0, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q5_1, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q2_k, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q3_k, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q4_k, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q5_k, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_q6_k, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_iq4_nl, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, levels_iq4_xs, (const void *row, unsigned char *levels, float *scales, float *mins, long count), (row, levels, scales, mins, count)) \
    X(void, quantize_q8_tokens, (const float *x, long tokens, long k, signed char *values, float *scales, float *sums), (x, tokens, k, values, scales, sums)) \
    X(long, matmul_levels_workspace, (long k), (k)) \
    X(void, interleave_rows, (const void *rows, long row_bytes, long groups, long blocks, long block_bytes, long halves, void *out), (rows, row_bytes, groups, blocks, block_bytes, halves, out)) \
    X(void, restore_rows, (const void *groups, long group_count, long blocks, long block_bytes, long halves, void *rows), (groups, group_count, blocks, block_bytes, halves, rows)) \
    X(void, dot_q4_k_x8_q8, (const void *groups, long group_count, const signed char *values, const float *scales, const float *sums, long count, float *out, int without_vnni), (groups, group_count, values, scales, sums, count, out, without_vnni)) \
    X(void, dot_q4_0_x8_q8, (const void *groups, long group_count, const signed char *values, const float *scales, const float *sums, long count, float *out, int without_vnni), (groups, group_count, values, scales, sums, count, out, without_vnni)) \
    X(void, matmul_levels_q8, (lumen_levels_fn decode, const void *w, long row_bytes, long rows, const signed char *values, const float *scales, const float *sums, long tokens, long k, float *out, long out_stride, void *workspace, int without_vnni), (decode, w, row_bytes, rows, values, scales, sums, tokens, k, out, out_stride, workspace, without_vnni)) \
    X(void, attend_f32, (const void *keys, const void *values, long stride, const float *query, long dim, long first, long length, float scale, float *scores, float *out), (keys, values, stride, query, dim, first, length, scale, scores, out)) \
    X(void, attend_f16, (const void *keys, const void *values, long stride, const float *query, long dim, long first, long length, float scale, float *scores, float *out), (keys, values, stride, query, dim, first, length, scale, scores, out)) \
    X(void, attend4_f32, (const void *keys, const void *values, long stride, const float *query, long query_stride, long dim, long length, float scale, float *scores, long scores_stride, float *out, long out_stride), (keys, values, stride, query, query_stride, dim, length, scale, scores, scores_stride, out, out_stride)) \
    X(void, attend4_f16, (const void *keys, const void *values, long stride, const float *query, long query_stride, long dim, long length, float scale, float *scores, long scores_stride, float *out, long out_stride), (keys, values, stride, query, query_stride, dim, length, scale, scores, scores_stride, out, out_stride)) \
    X(void, store_f32, (const float *x, void *out, long count), (x, out, count)) \
    X(void, store_f16, (const float *x, void *out, long count), (x, out, count)) \
    X(unsigned long long, read_bytes, (const void *p, long bytes), (p, bytes)) \
    X(float, fit_affine, (const float *x, const float *weights, int count, int levels, float *offset), (x, weights, count, levels, offset)) \
    X(float, fit_symmetric, (const float *x, int count, int max_level), (x, count, max_level))

#define LUMEN_KERNEL_FIELD(type, name, parameters, arguments) type (*name) parameters;
#define LUMEN_KERNEL_ENTRY(type, name, parameters, arguments) .name = lumen_##name,

/// One variant's entry points, by kernel name.
struct lumen_kernel_table {
    /// "avx2" or "portable".
    const char *variant;
    LUMEN_KERNELS(LUMEN_KERNEL_FIELD)
};

#endif
