// The format table, as ggml's `type_traits_cpu`: each format's kernels, found by llama.cpp's name
// of the format (Swift's `TensorFormat` looks its row up by that name). A format without a row
// has a layout and no kernels. A format's kernels live in its family's file; giving a format
// kernels is that file (or a new one, included by Variant.c) and its row here.

static const struct lumen_format_kernels formats[] = {
    {.name = "F32", .dequantize = dequantize_f32, .dot = lumen_dot_f32, .add_scaled_dots = add_scaled_dots_f32},
    {.name = "F16", .dequantize = dequantize_f16, .dot = dot_f16, .add_scaled_dots = add_scaled_dots_f16},
    {.name = "BF16", .dequantize = dequantize_bf16, .dot = dot_bf16, .add_scaled_dots = add_scaled_dots_bf16},
    {.name = "Q8_0", .dequantize = dequantize_q8_0, .dot = dot_q8_0, .dot_q8 = dot_q8_0_q8, .dot_q8_tokens = dot_q8_0_q8_tokens, .levels = levels_q8_0},
    {.name = "Q4_0", .dequantize = dequantize_q4_0, .dot = dot_q4_0, .dot_q8 = dot_q4_0_q8, .dot_q8_tokens = dot_q4_0_q8_tokens, .levels = levels_q4_0,
     .x8_leading_halves = 1, .dot_x8_q8 = dot_q4_0_x8_q8, .dot_x8_q8_tokens = dot_q4_0_x8_q8_tokens},
    {.name = "Q4_1", .dequantize = dequantize_q4_1, .dot = dot_q4_1, .dot_q8 = dot_q4_1_q8, .dot_q8_tokens = dot_q4_1_q8_tokens, .levels = levels_q4_1,
     .x8_leading_halves = 2, .dot_x8_q8 = dot_q4_1_x8_q8, .dot_x8_q8_tokens = dot_q4_1_x8_q8_tokens},
    {.name = "Q5_0", .dequantize = dequantize_q5_0, .dot = dot_q5_0, .dot_q8 = dot_q5_0_q8, .dot_q8_tokens = dot_q5_0_q8_tokens, .levels = levels_q5_0},
    {.name = "Q5_1", .dequantize = dequantize_q5_1, .dot = dot_q5_1, .dot_q8 = dot_q5_1_q8, .dot_q8_tokens = dot_q5_1_q8_tokens, .levels = levels_q5_1},
    {.name = "Q2_K", .dequantize = dequantize_q2_k, .dot = dot_q2_k, .dot_q8 = dot_q2_k_q8, .dot_q8_tokens = dot_q2_k_q8_tokens, .levels = levels_q2_k},
    {.name = "Q3_K", .dequantize = dequantize_q3_k, .dot = dot_q3_k, .dot_q8 = dot_q3_k_q8, .dot_q8_tokens = dot_q3_k_q8_tokens, .levels = levels_q3_k},
    {.name = "Q4_K", .dequantize = dequantize_q4_k, .dot = dot_q4_k, .dot_q8 = dot_q4_k_q8, .dot_q8_tokens = dot_q4_k_q8_tokens, .levels = levels_q4_k,
     .x8_leading_halves = 2, .dot_x8_q8 = dot_q4_k_x8_q8, .dot_x8_q8_tokens = dot_q4_k_x8_q8_tokens},
    {.name = "Q5_K", .dequantize = dequantize_q5_k, .dot = dot_q5_k, .dot_q8 = dot_q5_k_q8, .dot_q8_tokens = dot_q5_k_q8_tokens, .levels = levels_q5_k},
    {.name = "Q6_K", .dequantize = dequantize_q6_k, .dot = dot_q6_k, .dot_q8 = dot_q6_k_q8, .dot_q8_tokens = dot_q6_k_q8_tokens, .levels = levels_q6_k},
    {.name = "IQ4_NL", .dequantize = dequantize_iq4_nl, .dot = dot_iq4_nl, .dot_q8 = dot_iq4_nl_q8, .dot_q8_tokens = dot_iq4_nl_q8_tokens, .levels = levels_iq4_nl},
    {.name = "IQ4_XS", .dequantize = dequantize_iq4_xs, .dot = dot_iq4_xs, .dot_q8 = dot_iq4_xs_q8, .dot_q8_tokens = dot_iq4_xs_q8_tokens, .levels = levels_iq4_xs},
    {.name = "MXFP4", .dequantize = dequantize_mxfp4, .dot = dot_mxfp4, .dot_q8 = dot_mxfp4_q8, .dot_q8_tokens = dot_mxfp4_q8_tokens, .levels = levels_mxfp4},
};

static const struct lumen_format_kernels *lumen_format_kernels_at(long index) {
    return index >= 0 && index < (long)(sizeof formats / sizeof formats[0]) ? &formats[index] : 0;
}
