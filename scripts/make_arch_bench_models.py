#!/usr/bin/env python3
"""Random-weight models of the newer architectures' real shapes, for `lumen bench` against
`llama-bench` (scripts/bench_architectures.py): a Qwen3.5-0.8B-shaped hybrid (`qwen35`: 24 layers
of 1024, three Gated DeltaNet layers of 16 key and 16 value heads of 128 to each gated attention
layer of 8 heads of 256, 2 KV heads, RoPE on 64 dimensions, a 3584 feed-forward) and a scaled-down
Qwen3-30B-A3B-shaped mixture of experts (`qwen3moe`: its width 2048, heads 32 and 4 of 128,
experts of 768 with 8 routed, but 8 layers of 32 experts, so that it is written in minutes), both
in Q8_0 (norms and the router F32); and a gpt-oss-20b-shaped mixture of experts (`gpt-oss`: all
24 layers of 2880, 64 query and 8 KV heads of 64, 32 experts of 2880 with 4 routed, sinks, biases,
every other layer sliding over 128 positions, YaRN), written directly in llama.cpp's MXFP4_MOE
layout (experts MXFP4, other matrices Q8_0) from random blocks, as its 19 billion weights would
take hours to quantize here; and an LFM2-1.2B-shaped hybrid (`lfm2`: 16 layers of 2048, short
convolutions over 3 inputs but in layers 2, 5, 8, 10, 12 and 14, which attend with 32 and 8 heads
of 64, an 8192 feed-forward) in Q8_0. All with the Qwen3.5 vocabulary of ../shared (151,936 tokens).
Usage: make_arch_bench_models.py SHARED_DIR OUT_DIR"""
import pathlib
import sys

import gguf

from gguf_vocabulary import copy_vocabulary
import numpy

SHAPES = {
    "qwen35-0.8b-shape": dict(architecture="qwen35", embed=1024, layers=24, heads=8, kv_heads=2, head=256, rope=64, ffn=3584,
                              hybrid=dict(key_heads=16, value_heads=16, width=128, convolution=4)),
    "qwen3moe-a3b-shape": dict(architecture="qwen3moe", embed=2048, layers=8, heads=32, kv_heads=4, head=128, rope=128, ffn=6144,
                               experts=dict(count=32, used=8, width=768)),
    "lfm2-1.2b-shape": dict(architecture="lfm2", embed=2048, layers=16, heads=32, kv_heads=8, head=64, rope=64, ffn=8192,
                            lfm2=dict(attention=[2, 5, 8, 10, 12, 14], convolution=3)),
    "gpt-oss-20b-shape-mxfp4": dict(architecture="gpt-oss", embed=2880, layers=24, heads=64, kv_heads=8, head=64, rope=64, ffn=2880,
                                    experts=dict(count=32, used=4, width=2880), gpt_oss=True),
}

# The block layouts random blocks are written in: bytes per block of 32, and how to make a block's
# scale field (bytes from its offset) so the weights are of the size trained ones are (~0.02).
RANDOM_BLOCKS = {
    gguf.GGMLQuantizationType.Q8_0: (34, lambda count: numpy.full(count, 0.0002, dtype=numpy.float16).view(numpy.uint8).reshape(-1, 2)),
    gguf.GGMLQuantizationType.MXFP4: (17, lambda count: numpy.full((count, 1), 119, dtype=numpy.uint8)),
}


def write(name, shape, shared, out):
    path = out / f"{name}.gguf"
    if path.exists():
        print("exists:", path)
        return
    random = numpy.random.default_rng(7)
    architecture, embed, head = shape["architecture"], shape["embed"], shape["head"]
    writer = gguf.GGUFWriter(str(path) + ".tmp", architecture)
    writer.add_name(name)
    vocabulary = copy_vocabulary(writer, shared / "models/vocab/ggml-vocab-qwen35.gguf")
    writer.add_context_length(4096)
    writer.add_embedding_length(embed)
    writer.add_block_count(shape["layers"])
    writer.add_feed_forward_length(shape["ffn"])
    lfm2 = shape.get("lfm2")
    writer.add_head_count(shape["heads"])
    # LFM2's key/value heads are counted per layer, none in a convolution layer.
    writer.add_head_count_kv([shape["kv_heads"] if layer in lfm2["attention"] else 0 for layer in range(shape["layers"])]
                             if lfm2 else shape["kv_heads"])
    writer.add_key_length(head)
    writer.add_value_length(head)
    writer.add_rope_dimension_count(shape["rope"])
    if not shape.get("gpt_oss"):
        writer.add_rope_freq_base(10_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)

    def matrix(tensor, *dims, quantized=True, kind=gguf.GGMLQuantizationType.Q8_0):
        # dims as ggml's shape (columns first); numpy's is reversed.
        if quantized and shape.get("gpt_oss"):
            block_bytes, scale = RANDOM_BLOCKS[kind]
            blocks = random.integers(0, 256, size=(numpy.prod(dims) // 32, block_bytes), dtype=numpy.uint8)
            field = scale(len(blocks))
            blocks[:, :field.shape[1]] = field
            writer.add_tensor(tensor, blocks.reshape(*dims[:0:-1], dims[0] // 32 * block_bytes), raw_dtype=kind)
            return
        weights = (random.standard_normal(dims[::-1], dtype=numpy.float32) * 0.02).astype(numpy.float32)
        if quantized:
            writer.add_tensor(tensor, gguf.quants.quantize(weights, gguf.GGMLQuantizationType.Q8_0), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(tensor, weights)

    def vector(tensor, length, value=1.0):
        writer.add_tensor(tensor, numpy.full(length, value, dtype=numpy.float32))

    gpt_oss = shape.get("gpt_oss")
    if gpt_oss:
        writer.add_rope_freq_base(150_000.0)
        writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        writer.add_rope_scaling_factor(32.0)
        writer.add_rope_scaling_orig_ctx_len(4096)
        writer.add_sliding_window(128)

    hybrid, experts = shape.get("hybrid"), shape.get("experts")
    if hybrid:
        writer.add_ssm_conv_kernel(hybrid["convolution"])
        writer.add_ssm_inner_size(hybrid["value_heads"] * hybrid["width"])
        writer.add_ssm_state_size(hybrid["width"])
        writer.add_ssm_time_step_rank(hybrid["value_heads"])
        writer.add_ssm_group_count(hybrid["key_heads"])
        writer.add_uint32(f"{architecture}.full_attention_interval", 4)
        writer.add_rope_dimension_sections([11, 11, 10, 0])
    if lfm2:
        writer.add_shortconv_l_cache(lfm2["convolution"])
    if experts:
        writer.add_expert_count(experts["count"])
        writer.add_expert_used_count(experts["used"])
        writer.add_expert_feed_forward_length(experts["width"])
    matrix("token_embd.weight", embed, vocabulary)
    query, kv = shape["heads"] * head, shape["kv_heads"] * head
    for layer in range(shape["layers"]):
        prefix = f"blk.{layer}."
        vector(prefix + "attn_norm.weight", embed)
        if lfm2 and layer not in lfm2["attention"]:
            matrix(prefix + "shortconv.in_proj.weight", embed, 3 * embed)
            matrix(prefix + "shortconv.conv.weight", lfm2["convolution"], embed, quantized=False)
            matrix(prefix + "shortconv.out_proj.weight", embed, embed)
        elif hybrid and (layer + 1) % 4 != 0:
            key_heads, value_heads, width = hybrid["key_heads"], hybrid["value_heads"], hybrid["width"]
            channels = 2 * key_heads * width + value_heads * width
            matrix(prefix + "attn_qkv.weight", embed, channels)
            matrix(prefix + "attn_gate.weight", embed, value_heads * width)
            matrix(prefix + "ssm_conv1d.weight", hybrid["convolution"], channels, quantized=False)
            vector(prefix + "ssm_dt.bias", value_heads, 0.0)
            writer.add_tensor(prefix + "ssm_a", numpy.full(value_heads, -1.0, dtype=numpy.float32))
            matrix(prefix + "ssm_alpha.weight", embed, value_heads, quantized=False)
            matrix(prefix + "ssm_beta.weight", embed, value_heads, quantized=False)
            vector(prefix + "ssm_norm.weight", width)
            matrix(prefix + "ssm_out.weight", value_heads * width, embed)
        else:
            matrix(prefix + "attn_q.weight", embed, 2 * query if hybrid else query)
            matrix(prefix + "attn_k.weight", embed, kv)
            matrix(prefix + "attn_v.weight", embed, kv)
            if gpt_oss:
                for part, width in (("q", query), ("k", kv), ("v", kv), ("output", embed)):
                    vector(prefix + f"attn_{part}.bias", width, 0.0)
                vector(prefix + "attn_sinks.weight", shape["heads"], 0.0)
            else:
                vector(prefix + "attn_q_norm.weight", head)
                vector(prefix + "attn_k_norm.weight", head)
            matrix(prefix + "attn_output.weight", query, embed)
        vector(prefix + ("post_attention_norm.weight" if hybrid or gpt_oss else "ffn_norm.weight"), embed)
        if experts:
            kind = gguf.GGMLQuantizationType.MXFP4 if gpt_oss else gguf.GGMLQuantizationType.Q8_0
            matrix(prefix + "ffn_gate_inp.weight", embed, experts["count"], quantized=False)
            matrix(prefix + "ffn_gate_exps.weight", embed, experts["width"], experts["count"], kind=kind)
            matrix(prefix + "ffn_up_exps.weight", embed, experts["width"], experts["count"], kind=kind)
            matrix(prefix + "ffn_down_exps.weight", experts["width"], embed, experts["count"], kind=kind)
            if gpt_oss:
                vector(prefix + "ffn_gate_inp.bias", experts["count"], 0.0)
                for part, width in (("gate", experts["width"]), ("up", experts["width"]), ("down", embed)):
                    writer.add_tensor(prefix + f"ffn_{part}_exps.bias", numpy.zeros((experts["count"], width), dtype=numpy.float32))
        else:
            matrix(prefix + "ffn_gate.weight", embed, shape["ffn"])
            matrix(prefix + "ffn_up.weight", embed, shape["ffn"])
            matrix(prefix + "ffn_down.weight", shape["ffn"], embed)
    vector("token_embd_norm.weight" if lfm2 else "output_norm.weight", embed)
    matrix("output.weight", embed, vocabulary)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    pathlib.Path(str(path) + ".tmp").rename(path)
    print("wrote", path, path.stat().st_size)


def main(shared, out):
    out.mkdir(parents=True, exist_ok=True)
    for name, shape in SHAPES.items():
        write(name, shape, shared, out)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
