// Prints every kernel's results on fixed pseudo-random inputs, one "name index value" line each.
// `make check-arm64` builds it twice, for this machine (the AVX2 kernels, which the Swift tests
// check against scalar references) and for arm64 (the portable kernels through SIMDe's NEON, run
// under qemu-aarch64), and `scripts/compare_kernel_outputs.py` compares the two.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "CKernels.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

/// The next pseudo-random 64 bits (xorshift64*), the same on every machine.
static uint64_t next_random(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}

/// A float in [-1, 1).
static float next_float(void) { return (float)((double)(next_random() >> 11) * 0x1.0p-53 * 2.0 - 1.0); }

static void fill_floats(float *x, long count) {
    for (long i = 0; i < count; i++) x[i] = next_float();
}

static void print_floats(const char *name, const float *x, long count) {
    for (long i = 0; i < count; i++) printf("%s %ld %.9g\n", name, i, x[i]);
}

/// Where a quantized format's F16 scales sit in its block, so that `fill_row` can make them
/// 1/32 (or, for a one-byte E8M0 scale at the block's start, 2^-5); its kernels come from the
/// format table (`lumen_format_kernels_at`).
struct format {
    const char *name;
    long block_size, block_bytes;
    int scale_offsets[2], scale_count;
    const struct lumen_format_kernels *kernels;
    int e8m0_scale;
};

static struct format formats[] = {
    {"Q8_0", 32, 34, {0}, 1, 0},   {"Q4_0", 32, 18, {0}, 1, 0},       {"Q4_1", 32, 20, {0, 2}, 2, 0},
    {"Q5_0", 32, 22, {0}, 1, 0},   {"Q5_1", 32, 24, {0, 2}, 2, 0},    {"Q2_K", 256, 84, {80, 82}, 2, 0},
    {"Q3_K", 256, 110, {108}, 1, 0}, {"Q4_K", 256, 144, {0, 2}, 2, 0}, {"Q5_K", 256, 176, {0, 2}, 2, 0},
    {"Q6_K", 256, 210, {208}, 1, 0}, {"IQ4_NL", 32, 18, {0}, 1, 0},   {"IQ4_XS", 256, 136, {0}, 1, 0},
    {"MXFP4", 32, 17, {0}, 0, 0, 1},
};

/// The format table's row named `name`; exits when there is none.
static const struct lumen_format_kernels *kernels_named(const char *name) {
    for (long index = 0; lumen_format_kernels_at(index); index++)
        if (strcmp(lumen_format_kernels_at(index)->name, name) == 0) return lumen_format_kernels_at(index);
    fprintf(stderr, "the format table has no row %s\n", name);
    exit(1);
}

/// `blocks` random blocks of `format` whose F16 scales are 1/32 (0x2800).
static void fill_row(const struct format *format, uint8_t *row, long blocks) {
    for (long i = 0; i < blocks * format->block_bytes; i++) row[i] = (uint8_t)next_random();
    for (long b = 0; b < blocks; b++) {
        if (format->e8m0_scale) row[b * format->block_bytes] = 122;
        for (int s = 0; s < format->scale_count; s++) {
            row[b * format->block_bytes + format->scale_offsets[s]] = 0x00;
            row[b * format->block_bytes + format->scale_offsets[s] + 1] = 0x28;
        }
    }
}

enum { K = 512, ROWS = 11, TOKENS = 5, DIM = 64, LENGTH = 37 };

static void quantized_formats(void) {
    static uint8_t row[ROWS * (K / 32) * 210];
    static float x[TOKENS * K], widened[K], scales[TOKENS * K / 32], sums[TOKENS * 3 * K / 32], out[TOKENS * ROWS];
    static float chunk_scales[LUMEN_TOKEN_CHUNK * K / 32], chunk_sums[LUMEN_TOKEN_CHUNK * 3 * K / 32];
    static signed char values[TOKENS * K], chunk_values[LUMEN_TOKEN_CHUNK * K];
    char name[64];
    fill_floats(x, TOKENS * K);
    for (long t = 0; t < TOKENS; t++) lumen_quantize_q8(x + t * K, K, values + t * K, scales + t * K / 32, sums + t * 3 * K / 32);
    for (long i = 0; i < TOKENS * K; i++) printf("quantize_q8.values %ld %d\n", i, values[i]);
    print_floats("quantize_q8.scales", scales, TOKENS * K / 32);
    print_floats("quantize_q8.sums", sums, TOKENS * 3 * K / 32);
    lumen_quantize_q8_tokens(x, TOKENS, K, chunk_values, chunk_scales, chunk_sums);
    for (long i = 0; i < LUMEN_TOKEN_CHUNK * K; i++) printf("quantize_q8_tokens.values %ld %d\n", i, chunk_values[i]);
    print_floats("quantize_q8_tokens.scales", chunk_scales, LUMEN_TOKEN_CHUNK * K / 32);
    print_floats("quantize_q8_tokens.sums", chunk_sums, LUMEN_TOKEN_CHUNK * 3 * K / 32);
    void *workspace = malloc((size_t)lumen_matmul_levels_workspace(K));
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        struct format *format = &formats[f];
        const struct lumen_format_kernels *kernels = format->kernels = kernels_named(format->name);
        const long row_bytes = K / format->block_size * format->block_bytes;
        fill_row(format, row, ROWS * K / format->block_size);
        kernels->dequantize(row, widened, K);
        snprintf(name, sizeof name, "%s.dequantize", format->name);
        print_floats(name, widened, K);
        float dot = kernels->dot(row, x, K);
        snprintf(name, sizeof name, "%s.dot", format->name);
        print_floats(name, &dot, 1);
        float product = kernels->dot_q8(row, values, scales, sums, K, 0);
        snprintf(name, sizeof name, "%s.dot_q8", format->name);
        print_floats(name, &product, 1);
        kernels->dot_q8_tokens(row, row_bytes, ROWS, values, scales, sums, K, TOKENS, out, ROWS, 0);
        snprintf(name, sizeof name, "%s.dot_q8_tokens", format->name);
        print_floats(name, out, TOKENS * ROWS);
        lumen_matmul_levels_q8(kernels->levels, row, row_bytes, ROWS, chunk_values, chunk_scales, chunk_sums, TOKENS, K, out, ROWS, workspace, 0);
        snprintf(name, sizeof name, "%s.matmul_levels_q8", format->name);
        print_floats(name, out, TOKENS * ROWS);
    }
    free(workspace);
}

/// Sixteen rows of `format` interleaved eight at a time: the eight-row product (for one token and
/// for several), and the rows restored.
static void interleaved(const struct format *format) {
    enum { GROUPS = 2 };
    const char *name = format->name;
    const long halves = format->kernels->x8_leading_halves;
    const long blocks = K / format->block_size, row_bytes = blocks * format->block_bytes;
    static float x[K], scales[K / 32], sums[3 * K / 32], out[8 * GROUPS];
    static signed char values[K];
    fill_floats(x, K);
    lumen_quantize_q8(x, K, values, scales, sums);
    uint8_t *row = malloc((size_t)(8 * GROUPS * row_bytes)), *restored = malloc((size_t)(8 * GROUPS * row_bytes));
    void *groups = malloc((size_t)(8 * GROUPS * row_bytes));
    fill_row(format, row, 8 * GROUPS * blocks);
    lumen_interleave_rows(row, row_bytes, GROUPS, blocks, format->block_bytes, halves, groups);
    format->kernels->dot_x8_q8(groups, GROUPS, values, scales, sums, K, out, 0);
    char label[64];
    snprintf(label, sizeof label, "%s.dot_x8_q8", name);
    print_floats(label, out, 8 * GROUPS);
    if (format->kernels->dot_x8_q8_tokens) {
        // Seven tokens: four at once, two, then one.
        enum { TOKENS_X8 = 7 };
        static float many_x[TOKENS_X8 * K], many_scales[TOKENS_X8 * K / 32], many_sums[TOKENS_X8 * 3 * K / 32], many_out[TOKENS_X8 * 8 * GROUPS];
        static signed char many_values[TOKENS_X8 * K];
        fill_floats(many_x, TOKENS_X8 * K);
        for (long t = 0; t < TOKENS_X8; t++)
            lumen_quantize_q8(many_x + t * K, K, many_values + t * K, many_scales + t * K / 32, many_sums + 3 * t * K / 32);
        format->kernels->dot_x8_q8_tokens(groups, GROUPS, many_values, many_scales, many_sums, K, TOKENS_X8, many_out, 8 * GROUPS, 0);
        snprintf(label, sizeof label, "%s.dot_x8_q8_tokens", name);
        print_floats(label, many_out, TOKENS_X8 * 8 * GROUPS);
    }
    lumen_restore_rows(groups, GROUPS, blocks, format->block_bytes, halves, restored);
    printf("%s.restore 0 %d\n", name, memcmp(row, restored, (size_t)(8 * GROUPS * row_bytes)) == 0);
    free(row);
    free(restored);
    free(groups);
}

static void float_kernels(void) {
    static float w[ROWS * K], x[TOKENS * K], out[TOKENS * ROWS];
    static uint16_t halves[K];
    fill_floats(w, ROWS * K);
    fill_floats(x, TOKENS * K);
    for (long count = 1; count <= 100; count += 33) {
        float dot = lumen_dot_f32(w, x, count);
        print_floats("dot_f32", &dot, 1);
    }
    lumen_store_f16(w, halves, K);
    for (long i = 0; i < K; i++) printf("store_f16 %ld %u\n", i, halves[i]);
    float dot = kernels_named("F16")->dot(halves, x, K - 3), widened[K];
    print_floats("dot_f16", &dot, 1);
    kernels_named("F16")->dequantize(halves, widened, K - 3);
    print_floats("dequantize_f16", widened, K - 3);
    dot = kernels_named("BF16")->dot(halves, x, K - 5);
    print_floats("dot_bf16", &dot, 1);
    kernels_named("BF16")->dequantize(halves, widened, K - 5);
    print_floats("dequantize_bf16", widened, K - 5);
    lumen_matmul_f32(w, K, ROWS, x, TOKENS, K - 8, out, ROWS);
    print_floats("matmul_f32", out, TOKENS * ROWS);
    lumen_matrix_product_f32(ROWS, TOKENS, K - 8, w, K, 1, x, TOKENS, 1, out, TOKENS, 0);
    print_floats("matrix_product_f32", out, ROWS * TOKENS);
    lumen_matrix_product_f32(ROWS, TOKENS, K - 8, w, 1, ROWS, x, 1, K, out, TOKENS, 1);
    print_floats("matrix_product_f32.strided", out, ROWS * TOKENS);
    float weights[32], offset = 0;
    for (int i = 0; i < 32; i++) weights[i] = fabsf(w[i]) + 0.25f;
    float scale = lumen_fit_affine(x, weights, 32, 15, &offset);
    print_floats("fit_affine.scale", &scale, 1);
    print_floats("fit_affine.offset", &offset, 1);
    scale = lumen_fit_symmetric(x, 16, 32);
    print_floats("fit_symmetric", &scale, 1);
}

static void attention(void) {
    enum { STRIDE = 2 * DIM };
    static float keys[(LENGTH + 3) * STRIDE], cache_values[(LENGTH + 3) * STRIDE], query[4 * DIM];
    static uint16_t half_keys[(LENGTH + 3) * STRIDE], half_values[(LENGTH + 3) * STRIDE];
    static float scores[4 * (LENGTH + 8)], out[4 * DIM];
    fill_floats(keys, (LENGTH + 3) * STRIDE);
    fill_floats(cache_values, (LENGTH + 3) * STRIDE);
    fill_floats(query, 4 * DIM);
    lumen_store_f16(keys, half_keys, (LENGTH + 3) * STRIDE);
    lumen_store_f16(cache_values, half_values, (LENGTH + 3) * STRIDE);
    // Without a sink, and with one (gpt-oss's attention sinks).
    lumen_attend_f32(keys, cache_values, STRIDE, query, DIM, 3, LENGTH, 0.125f, -INFINITY, scores, out);
    print_floats("attend_f32", out, DIM);
    lumen_attend_f16(half_keys, half_values, STRIDE, query, DIM, 0, LENGTH, 0.125f, 0.75f, scores, out);
    print_floats("attend_f16", out, DIM);
    lumen_attend4_f32(keys, cache_values, STRIDE, query, DIM, DIM, LENGTH, 0.125f, 0.75f, scores, LENGTH + 8, out, DIM);
    print_floats("attend4_f32", out, 4 * DIM);
    lumen_attend4_f16(half_keys, half_values, STRIDE, query, DIM, DIM, LENGTH, 0.125f, -INFINITY, scores, LENGTH + 8, out, DIM);
    print_floats("attend4_f16", out, 4 * DIM);
    // A Q8_0 cache: 34-byte blocks of 32 values, strides in blocks.
    static unsigned char block_keys[(LENGTH + 3) * STRIDE / 32 * 34], block_values[(LENGTH + 3) * STRIDE / 32 * 34];
    lumen_store_q8_0(keys, block_keys, (LENGTH + 3) * STRIDE);
    lumen_store_q8_0(cache_values, block_values, (LENGTH + 3) * STRIDE);
    for (long i = 0; i < (LENGTH + 3) * STRIDE / 32 * 34; i++) printf("store_q8_0 %ld %u\n", i, block_keys[i]);
    lumen_attend_q8_0(block_keys, block_values, STRIDE / 32, query, DIM, 0, LENGTH, 0.125f, 0.75f, scores, out);
    print_floats("attend_q8_0", out, DIM);
    lumen_attend4_q8_0(block_keys, block_values, STRIDE / 32, query, DIM, DIM, LENGTH, 0.125f, -INFINITY, scores, LENGTH + 8, out, DIM);
    print_floats("attend4_q8_0", out, 4 * DIM);
    static float logits[1003];
    fill_floats(logits, 1003);
    for (int i = 0; i < 1003; i++) logits[i] *= 12.0f;
    const float normalizer = lumen_log_sum_exp(logits, 1003);
    print_floats("log_sum_exp", &normalizer, 1);
    static float probabilities[1003];
    lumen_softmax_f32(logits, 1003, probabilities, 0, NULL);
    print_floats("softmax_f32", probabilities, 1003);
    lumen_softmax_f32(logits, 1003, probabilities, 1, NULL);
    print_floats("log_softmax_f32", probabilities, 1003);
    lumen_softmax_f32(logits, 500, probabilities, 0, &normalizer);
    print_floats("softmax_f32.part", probabilities, 500);
}

int main(void) {
    printf("variant 0 %s\n", lumen_kernel_variant());
    quantized_formats();
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
        if (formats[f].kernels->dot_x8_q8) interleaved(&formats[f]);
    float_kernels();
    attention();
    return 0;
}
