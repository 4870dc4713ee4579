#!/usr/bin/env python3
"""Writes small random-weight models in the exact tensor layouts of the architectures no real
model here covers (qwen2, qwen3, phi3, Llama 3 with its rope_freqs, Qwen 3's mixture of experts
with more experts than it routes to, and SmolLM3 with enough layers for one without RoPE), each
with the real
vocabulary of its family from ../shared/models/vocab/. The weights come from a fixed seed, so the
same files come out every time: the references in Tests/reference/synthetic/ were made from them
with llama.cpp (scripts/make_synthetic_references.py).
Usage: make_synthetic_models.py SHARED_DIR OUT_DIR"""
import pathlib
import sys

import numpy
import gguf

shared, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)

EMBED, LAYERS, HEADS, KV_HEADS, FFN, CONTEXT = 64, 2, 4, 2, 128, 512

MODELS = {
    # name: (architecture, vocabulary file, head dimension, options)
    "qwen2": ("qwen2", "ggml-vocab-qwen2.gguf", 16, {"biases": True}),
    "qwen3": ("qwen3", "ggml-vocab-qwen2.gguf", 32, {"qk_norm": True, "tied": True}),
    "phi3": ("phi3", "ggml-vocab-phi-3.gguf", 16, {"fused": True}),
    "llama3": ("llama", "ggml-vocab-llama-bpe.gguf", 16, {"rope_freqs": True}),
    "qwen3moe": ("qwen3moe", "ggml-vocab-qwen2.gguf", 32, {"qk_norm": True, "experts": (8, 2, 48)}),
    "smollm3": ("smollm3", "ggml-vocab-llama-bpe.gguf", 16, {"layers": 4}),
}


def copy_vocabulary(writer, path):
    reader = gguf.GGUFReader(str(path))
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = field.contents()
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, value)
        elif kind in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
            writer.add_float32(key, value)
        else:
            writer.add_uint32(key, int(value))
    return len(reader.fields["tokenizer.ggml.tokens"].contents())


for name, (architecture, vocabulary, head, options) in MODELS.items():
    random = numpy.random.default_rng(sum(map(ord, name)))
    writer = gguf.GGUFWriter(str(out / f"{name}.gguf"), architecture)
    writer.add_name(f"synthetic-{name}")
    vocabulary_size = copy_vocabulary(writer, shared / "models/vocab" / vocabulary)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    layers = options.get("layers", LAYERS)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10000.0)
    writer.add_key_length(head)
    writer.add_value_length(head)
    writer.add_rope_dimension_count(head)
    if options.get("experts"):
        count, used, width = options["experts"]
        writer.add_expert_count(count)
        writer.add_expert_used_count(used)
        writer.add_expert_feed_forward_length(width)

    def tensor(name, *shape, scale=0.5):
        writer.add_tensor(name, (random.standard_normal(shape[::-1]) * scale / numpy.sqrt(shape[0])).astype(numpy.float32))

    def norm(name, width):
        writer.add_tensor(name, (1 + 0.1 * random.standard_normal(width)).astype(numpy.float32))

    query, kv = HEADS * head, KV_HEADS * head
    tensor("token_embd.weight", EMBED, vocabulary_size, scale=8.0)
    for layer in range(layers):
        prefix = f"blk.{layer}."
        norm(prefix + "attn_norm.weight", EMBED)
        # Large query and key weights make attention peaked, so RoPE and the cache matter to
        # the logits (with near-uniform attention, a wrong RoPE would go unnoticed).
        if options.get("fused"):
            tensor(prefix + "attn_qkv.weight", EMBED, query + 2 * kv, scale=4.0)
        else:
            tensor(prefix + "attn_q.weight", EMBED, query, scale=4.0)
            tensor(prefix + "attn_k.weight", EMBED, kv, scale=4.0)
            tensor(prefix + "attn_v.weight", EMBED, kv)
        if options.get("biases"):
            for part, width in (("q", query), ("k", kv), ("v", kv)):
                writer.add_tensor(prefix + f"attn_{part}.bias", (0.1 * random.standard_normal(width)).astype(numpy.float32))
        if options.get("qk_norm"):
            norm(prefix + "attn_q_norm.weight", head)
            norm(prefix + "attn_k_norm.weight", head)
        tensor(prefix + "attn_output.weight", query, EMBED)
        norm(prefix + "ffn_norm.weight", EMBED)
        if options.get("experts"):
            # A decisive router, so tokens go to different experts.
            count, _, width = options["experts"]
            tensor(prefix + "ffn_gate_inp.weight", EMBED, count, scale=8.0)
            tensor(prefix + "ffn_gate_exps.weight", EMBED, width, count)
            tensor(prefix + "ffn_up_exps.weight", EMBED, width, count)
            tensor(prefix + "ffn_down_exps.weight", width, EMBED, count)
            continue
        if options.get("fused"):
            tensor(prefix + "ffn_up.weight", EMBED, 2 * FFN)
        else:
            tensor(prefix + "ffn_gate.weight", EMBED, FFN)
            tensor(prefix + "ffn_up.weight", EMBED, FFN)
        tensor(prefix + "ffn_down.weight", FFN, EMBED)
    norm("output_norm.weight", EMBED)
    if not options.get("tied"):
        tensor("output.weight", EMBED, vocabulary_size, scale=4.0)
    if options.get("rope_freqs"):
        writer.add_tensor("rope_freqs.weight", numpy.linspace(1.0, 8.0, head // 2).astype(numpy.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(out / f"{name}.gguf")
