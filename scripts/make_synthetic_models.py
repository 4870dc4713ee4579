#!/usr/bin/env python3
"""Writes small random-weight models in the exact tensor layouts of the architectures no real
model here covers (qwen2, qwen3, phi3 fused and with long RoPE factors, Llama 3 with its rope_freqs, Qwen 3's mixture of experts
with more experts than it routes to, SmolLM3 with enough layers for one without RoPE, and the
Qwen3.5 hybrid of Gated DeltaNet and gated attention layers, gpt-oss with MXFP4 experts, LFM2-MoE's
short convolutions and sigmoid-gated experts, Gemma 4 dense — narrower sliding heads, per-layer
embeddings, layers sharing another's keys and values — and its mixture of experts, OLMo 2 with sliding layers), each with the real
vocabulary of its family from ../shared/models/vocab/. The weights come from a fixed seed, so the
same files come out every time: the references in Tests/reference/synthetic/ were made from them
with llama.cpp (scripts/make_synthetic_references.py).
Usage: make_synthetic_models.py SHARED_DIR OUT_DIR"""
import pathlib
import sys

import numpy
import gguf

from gguf_vocabulary import copy_vocabulary

shared, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)

EMBED, LAYERS, HEADS, KV_HEADS, FFN, CONTEXT = 64, 2, 4, 2, 128, 512

MODELS = {
    # name: (architecture, vocabulary file, head dimension, options)
    "qwen2": ("qwen2", "ggml-vocab-qwen2.gguf", 16, {"biases": True}),
    "qwen3": ("qwen3", "ggml-vocab-qwen2.gguf", 32, {"qk_norm": True, "tied": True}),
    "phi3": ("phi3", "ggml-vocab-phi-3.gguf", 16, {"fused": True}),
    "llama3": ("llama", "ggml-vocab-llama-bpe.gguf", 16, {"rope_freqs": True}),
    # Phi-3 with separate Q/K/V matrices (its gate and up still fused) and long and short RoPE
    # factors, trained for 256 positions.
    "phi3long": ("phi3", "ggml-vocab-phi-3.gguf", 16, {"long_rope": True, "fused_ffn": True}),
    "qwen3moe": ("qwen3moe", "ggml-vocab-qwen2.gguf", 32, {"qk_norm": True, "experts": (8, 2, 48)}),
    "smollm3": ("smollm3", "ggml-vocab-llama-bpe.gguf", 16, {"layers": 4}),
    # Qwen3.5's hybrid: three Gated DeltaNet layers (2 key heads, 4 value heads of 16, a
    # convolution over 4 inputs), then a gated attention layer rotating 16 of its 32 dimensions.
    "qwen35": ("qwen35", "ggml-vocab-qwen35.gguf", 32, {"layers": 4, "hybrid": (2, 4, 16, 4), "rope": 16}),
    # Its mixture of experts: 8 experts of 48 (gate and up in one tensor), 2 routed, and a shared expert of 96.
    "qwen35moe": ("qwen35moe", "ggml-vocab-qwen35.gguf", 32, {"layers": 4, "hybrid": (2, 4, 16, 4), "rope": 16,
                                                            "experts": (8, 2, 48), "fused_experts": True, "shared_expert": 96}),
    # gpt-oss: 8 MXFP4 experts of 64 with biases, 2 routed; biased attention with sinks, layer 0
    # sliding over 8 positions, YaRN RoPE stretched 32 times from 4096 positions, as the real one.
    "gptoss": ("gpt-oss", "ggml-vocab-qwen2.gguf", 16, {"experts": (8, 2, 64), "gpt_oss": True, "rope_base": 150000.0}),
    # LFM2-MoE: short-convolution layers (over 3 inputs) around one attention layer (2), a dense
    # first layer, then 8 experts of 48, 2 routed by sigmoid with a selection bias; a milder router
    # (its sigmoids not all 0 or 1, so the bias changes some choices) and stronger experts.
    "lfm2moe": ("lfm2moe", "ggml-vocab-llama-bpe.gguf", 16, {"layers": 4, "lfm2": 2, "experts": (8, 2, 48),
                                                            "router_scale": 2.0, "down_scale": 8.0}),
    # Gemma 4 as E2B: sliding layers (8 positions, heads of 16) around full ones (heads of 32, one
    # key/value head, values = keys as the 31B's, proportional RoPE), per-layer embeddings of 8, the
    # last two layers reading layers 2's and 3's keys and values, wider feed-forwards there.
    "gemma4": ("gemma4", "ggml-vocab-gemma-4.gguf", 32, {"layers": 6, "gemma4": True}),
    # Gemma 4 as 26B-A4B: a dense feed-forward beside 8 experts of 32 (2 routed), no per-layer embeddings.
    "gemma4moe": ("gemma4", "ggml-vocab-gemma-4.gguf", 32, {"layers": 4, "gemma4": True, "experts": (8, 2, 32)}),
    # OLMo 2 with OLMo 3's sliding layers: norms after attention and the feed-forward, none before;
    # query and key norms over all heads; layers 0-2 sliding over 8 positions, layer 3 full. Llama
    # 3's vocabulary (OLMo 2's own is built on the same cl100k tokens).
    "olmo2": ("olmo2", "ggml-vocab-llama-bpe.gguf", 16, {"layers": 4, "olmo2": True}),
}


# A vocabulary-only file with GPT-4o's pre-tokenizer (gpt-oss's) on Llama 3's byte-level vocabulary
# (o200k itself is not here): llama.cpp's tokenizations of it are Tests/reference/tokenizer/gpt-4o.json.
vocabulary_writer = gguf.GGUFWriter(str(out / "gpt-4o-vocab.gguf"), "llama")
copy_vocabulary(vocabulary_writer, shared / "models/vocab/ggml-vocab-llama-bpe.gguf", keys="", overrides={"tokenizer.ggml.pre": "gpt-4o"})
vocabulary_writer.write_header_to_file()
vocabulary_writer.write_kv_data_to_file()
vocabulary_writer.close()

for name, (architecture, vocabulary, head, options) in MODELS.items():
    random = numpy.random.default_rng(sum(map(ord, name)))
    writer = gguf.GGUFWriter(str(out / f"{name}.gguf"), architecture)
    writer.add_name(f"synthetic-{name}")
    vocabulary_size = copy_vocabulary(writer, shared / "models/vocab" / vocabulary)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    layers = options.get("layers", LAYERS)
    writer.add_block_count(layers)
    if options.get("gemma4") and not options.get("experts"):
        # E2B's double-wide feed-forwards in the layers that share keys and values.
        writer.add_feed_forward_length([FFN] * (layers - 2) + [2 * FFN] * 2)
    else:
        writer.add_feed_forward_length(FFN)
    attending = options.get("lfm2")
    gemma4 = options.get("gemma4")
    # Gemma 4: which layers slide, and how many at the end read an earlier layer's cache.
    sliding = [layer % 4 != 3 and layer != layers - 1 for layer in range(layers)] if gemma4 else []
    shared_kv = 2 if gemma4 and not options.get("experts") else 0
    if gemma4:
        writer.add_head_count(HEADS)
        writer.add_head_count_kv([KV_HEADS if slides else 1 for slides in sliding])
        writer.add_sliding_window(8)
        writer.add_sliding_window_pattern(sliding)
        writer.add_shared_kv_layers(shared_kv)
        writer.add_key_length_swa(16)
        writer.add_value_length_swa(16)
        writer.add_rope_dimension_count_swa(16)
        writer.add_rope_freq_base_swa(10000.0)
        writer.add_final_logit_softcapping(30.0)
        writer.add_embedding_length_per_layer_input(0 if options.get("experts") else 8)
    elif attending is None:
        writer.add_head_count(HEADS)
        writer.add_head_count_kv(KV_HEADS)
    else:
        # As LFM2's converter writes them: key/value heads per layer, none in a convolution layer.
        writer.add_head_count(HEADS)
        writer.add_head_count_kv([KV_HEADS if layer == attending else 0 for layer in range(layers)])
        writer.add_shortconv_l_cache(3)
        writer.add_leading_dense_block_count(1)
        writer.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(options.get("rope_base", 1000000.0 if options.get("gemma4") else 10000.0))
    writer.add_key_length(head)
    writer.add_value_length(head)
    writer.add_rope_dimension_count(options.get("rope", head))
    if options.get("long_rope"):
        # As convert_hf_to_gguf writes Phi-3's 128k files: longrope and an attention factor (theirs
        # is √(1 + ln(scale) / ln(trained)) ≈ 1.19; 0.6 here, so that it visibly flattens this
        # model's peaked attention).
        writer.add_rope_scaling_orig_ctx_len(256)
        writer.add_rope_scaling_type(gguf.RopeScalingType.LONGROPE)
        writer.add_rope_scaling_attn_factors(0.6)
    olmo2 = options.get("olmo2")
    if olmo2:
        writer.add_sliding_window(8)
    if options.get("gpt_oss"):
        writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        writer.add_rope_scaling_factor(32.0)
        writer.add_rope_scaling_orig_ctx_len(4096)
        writer.add_sliding_window(8)
    if options.get("hybrid"):
        key_heads, value_heads, width, convolution = options["hybrid"]
        writer.add_ssm_conv_kernel(convolution)
        writer.add_ssm_inner_size(value_heads * width)
        writer.add_ssm_state_size(width)
        writer.add_ssm_time_step_rank(value_heads)
        writer.add_ssm_group_count(key_heads)
        writer.add_uint32(f"{architecture}.full_attention_interval", 4)
        rotated = options.get("rope", head) // 2
        writer.add_rope_dimension_sections([rotated - 2 * (rotated // 3), rotated // 3, rotated // 3, 0])
    if options.get("experts"):
        count, used, width = options["experts"]
        writer.add_expert_count(count)
        writer.add_expert_used_count(used)
        writer.add_expert_feed_forward_length(width)
        if options.get("shared_expert"):
            writer.add_expert_shared_feed_forward_length(options["shared_expert"])

    def tensor(name, *shape, scale=0.5):
        writer.add_tensor(name, (random.standard_normal(shape[::-1]) * scale / numpy.sqrt(shape[0])).astype(numpy.float32))

    def norm(name, width):
        writer.add_tensor(name, (1 + 0.1 * random.standard_normal(width)).astype(numpy.float32))

    def hybrid_layer(prefix, layer, shape, head):
        """A Qwen3.5 layer: Gated DeltaNet unless it is every fourth, then gated attention; the
        post-attention norm before the feed-forward."""
        key_heads, value_heads, width, convolution = shape
        if (layer + 1) % 4 != 0:
            channels = 2 * key_heads * width + value_heads * width
            # Strong mixing weights and write strengths, so the recurrence shapes the logits.
            tensor(prefix + "attn_qkv.weight", EMBED, channels, scale=4.0)
            tensor(prefix + "attn_gate.weight", EMBED, value_heads * width)
            writer.add_tensor(prefix + "ssm_conv1d.weight", (0.7 * random.standard_normal((channels, convolution))).astype(numpy.float32))
            writer.add_tensor(prefix + "ssm_dt.bias", random.standard_normal(value_heads).astype(numpy.float32))
            writer.add_tensor(prefix + "ssm_a", (-numpy.exp(random.uniform(-1.0, 0.5, value_heads))).astype(numpy.float32))
            tensor(prefix + "ssm_alpha.weight", EMBED, value_heads, scale=2.0)
            tensor(prefix + "ssm_beta.weight", EMBED, value_heads, scale=4.0)
            norm(prefix + "ssm_norm.weight", width)
            tensor(prefix + "ssm_out.weight", value_heads * width, EMBED, scale=2.0)
        else:
            # The query product gives each head its query and its output's gate.
            normed_attention(prefix, 2 * HEADS * head, head)
        norm(prefix + "post_attention_norm.weight", EMBED)
        if options.get("experts"):
            experts(prefix)
        else:
            dense_feed_forward(prefix)

    def normed_attention(prefix, query_rows, head):
        """Peaked attention with per-head query and key norms."""
        tensor(prefix + "attn_q.weight", EMBED, query_rows, scale=4.0)
        tensor(prefix + "attn_k.weight", EMBED, KV_HEADS * head, scale=4.0)
        tensor(prefix + "attn_v.weight", EMBED, KV_HEADS * head)
        norm(prefix + "attn_q_norm.weight", head)
        norm(prefix + "attn_k_norm.weight", head)
        tensor(prefix + "attn_output.weight", HEADS * head, EMBED)

    def dense_feed_forward(prefix):
        tensor(prefix + "ffn_gate.weight", EMBED, FFN)
        tensor(prefix + "ffn_up.weight", EMBED, FFN)
        tensor(prefix + "ffn_down.weight", FFN, EMBED)

    def lfm2_layer(prefix, layer):
        """An LFM2 layer: a short convolution unless it is the one that attends (with query and key
        norms); a dense feed-forward in the first layer, experts (with a selection bias) after."""
        if layer != attending:
            # Its three parts about as large as the residual, so that neither the convolution (with
            # its two gates, a product of three) nor the experts drown the other.
            tensor(prefix + "shortconv.in_proj.weight", EMBED, 3 * EMBED, scale=1.0)
            writer.add_tensor(prefix + "shortconv.conv.weight", (0.7 * random.standard_normal((EMBED, 3))).astype(numpy.float32))
            tensor(prefix + "shortconv.out_proj.weight", EMBED, EMBED)
        else:
            normed_attention(prefix, HEADS * head, head)
        norm(prefix + "ffn_norm.weight", EMBED)
        if layer == 0:
            dense_feed_forward(prefix)
        else:
            experts(prefix)
            # On the scale of the sigmoid's probabilities, so it changes some choices.
            writer.add_tensor(prefix + "exp_probs_b.bias", (0.3 * random.standard_normal(options["experts"][0])).astype(numpy.float32))

    def bias(name, *shape):
        writer.add_tensor(name, (0.1 * random.standard_normal(shape[::-1])).astype(numpy.float32))

    def mxfp4(name, *shape):
        """A random matrix stored as MXFP4 (gguf's reference quantizer, as ggml's)."""
        weights = (random.standard_normal(shape[::-1]) * 0.5 / numpy.sqrt(shape[0])).astype(numpy.float32)
        writer.add_tensor(name, gguf.quants.quantize(weights, gguf.GGMLQuantizationType.MXFP4), raw_dtype=gguf.GGMLQuantizationType.MXFP4)

    def experts(prefix):
        """Routed experts with a decisive router, so tokens go to different experts: their gate
        and up matrices in one tensor with `fused_experts`; and a gated shared expert of
        `shared_expert` width. gpt-oss's are MXFP4 and biased, as is its router."""
        count, _, width = options["experts"]
        tensor(prefix + "ffn_gate_inp.weight", EMBED, count, scale=options.get("router_scale", 8.0))
        if options.get("gpt_oss"):
            bias(prefix + "ffn_gate_inp.bias", count)
            for part, shape in (("gate", (EMBED, width)), ("up", (EMBED, width)), ("down", (width, EMBED))):
                mxfp4(prefix + f"ffn_{part}_exps.weight", *shape, count)
                bias(prefix + f"ffn_{part}_exps.bias", shape[1], count)
            return
        if options.get("fused_experts"):
            tensor(prefix + "ffn_gate_up_exps.weight", EMBED, 2 * width, count)
        else:
            tensor(prefix + "ffn_gate_exps.weight", EMBED, width, count)
            tensor(prefix + "ffn_up_exps.weight", EMBED, width, count)
        tensor(prefix + "ffn_down_exps.weight", width, EMBED, count, scale=options.get("down_scale", 0.5))
        if options.get("shared_expert"):
            shared = options["shared_expert"]
            writer.add_tensor(prefix + "ffn_gate_inp_shexp.weight", (random.standard_normal(EMBED) * 2 / numpy.sqrt(EMBED)).astype(numpy.float32))
            tensor(prefix + "ffn_gate_shexp.weight", EMBED, shared)
            tensor(prefix + "ffn_up_shexp.weight", EMBED, shared)
            tensor(prefix + "ffn_down_shexp.weight", shared, EMBED)

    def table(name, *shape, scale):
        """An embedding table in F16 (Gemma 4's vocabulary has 262,144 rows)."""
        writer.add_tensor(name, (random.standard_normal(shape[::-1]) * scale / numpy.sqrt(shape[0])).astype(numpy.float16))

    def gemma4_layer(prefix, layer):
        """A Gemma 4 layer: attention with query, key and (unweighted) value norms, post norms,
        a GELU feed-forward — beside experts in the MoE — then the per-layer embedding's gated
        product, and the layer's output scale."""
        slides = sliding[layer]
        width, kv_heads = (16, KV_HEADS) if slides else (head, 1)
        tensor(prefix + "attn_q.weight", EMBED, HEADS * width, scale=4.0)
        norm(prefix + "attn_q_norm.weight", width)
        if layer < layers - shared_kv:
            tensor(prefix + "attn_k.weight", EMBED, kv_heads * width, scale=4.0)
            norm(prefix + "attn_k_norm.weight", width)
            if slides or options.get("experts"):
                tensor(prefix + "attn_v.weight", EMBED, kv_heads * width)
        tensor(prefix + "attn_output.weight", HEADS * width, EMBED)
        norm(prefix + "post_attention_norm.weight", EMBED)
        norm(prefix + "ffn_norm.weight", EMBED)
        hidden = FFN if layer < layers - shared_kv else 2 * FFN
        tensor(prefix + "ffn_gate.weight", EMBED, hidden)
        tensor(prefix + "ffn_up.weight", EMBED, hidden)
        tensor(prefix + "ffn_down.weight", hidden, EMBED)
        norm(prefix + "post_ffw_norm.weight", EMBED)
        if options.get("experts"):
            count, _, expert_width = options["experts"]
            tensor(prefix + "ffn_gate_inp.weight", EMBED, count, scale=8.0)
            writer.add_tensor(prefix + "ffn_gate_inp.scale", (1 + 0.3 * random.standard_normal(EMBED)).astype(numpy.float32))
            for name in ("pre_ffw_norm_2", "post_ffw_norm_1", "post_ffw_norm_2"):
                norm(prefix + name + ".weight", EMBED)
            tensor(prefix + "ffn_gate_up_exps.weight", EMBED, 2 * expert_width, count)
            tensor(prefix + "ffn_down_exps.weight", expert_width, EMBED, count)
            writer.add_tensor(prefix + "ffn_down_exps.scale", random.uniform(0.5, 2.0, count).astype(numpy.float32))
        else:
            tensor(prefix + "inp_gate.weight", EMBED, 8, scale=2.0)
            tensor(prefix + "proj.weight", 8, EMBED)
            norm(prefix + "post_norm.weight", EMBED)
        writer.add_tensor(prefix + "layer_output_scale.weight", numpy.array([random.uniform(0.5, 1.5)], dtype=numpy.float32))

    query, kv = HEADS * head, KV_HEADS * head
    if gemma4:
        # Small beside the blocks' outputs: with the output tied to it, a large embedding would echo the input token.
        table("token_embd.weight", EMBED, vocabulary_size, scale=1.0)
        if not options.get("experts"):
            table("per_layer_token_embd.weight", 8 * layers, vocabulary_size, scale=8.0)
            tensor("per_layer_model_proj.weight", EMBED, 8 * layers)
            norm("per_layer_proj_norm.weight", 8)
        for layer in range(layers):
            prefix = f"blk.{layer}."
            norm(prefix + "attn_norm.weight", EMBED)
            gemma4_layer(prefix, layer)
        norm("output_norm.weight", EMBED)
        if not options.get("experts"):
            # An output matrix of its own, its logits spread widely enough over 262,144 tokens that
            # greedy choices are clear (the MoE keeps Gemma's tied output).
            table("output.weight", EMBED, vocabulary_size, scale=4.0)
        # Proportional RoPE: the full layers rotate their first 8 pairs, not the other 8.
        writer.add_tensor("rope_freqs.weight", numpy.array([1.0] * 8 + [1e30] * 8, dtype=numpy.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        print(out / f"{name}.gguf")
        continue
    tensor("token_embd.weight", EMBED, vocabulary_size, scale=8.0)
    for layer in range(layers):
        prefix = f"blk.{layer}."
        if not olmo2:
            norm(prefix + "attn_norm.weight", EMBED)
        if options.get("hybrid"):
            hybrid_layer(prefix, layer, options["hybrid"], head)
            continue
        if attending is not None:
            lfm2_layer(prefix, layer)
            continue
        # Large query and key weights make attention peaked, so RoPE and the cache matter to
        # the logits (with near-uniform attention, a wrong RoPE would go unnoticed).
        if options.get("fused"):
            tensor(prefix + "attn_qkv.weight", EMBED, query + 2 * kv, scale=4.0)
        else:
            tensor(prefix + "attn_q.weight", EMBED, query, scale=4.0)
            tensor(prefix + "attn_k.weight", EMBED, kv, scale=4.0)
            tensor(prefix + "attn_v.weight", EMBED, kv)
        if options.get("biases") or options.get("gpt_oss"):
            for part, width in (("q", query), ("k", kv), ("v", kv)):
                writer.add_tensor(prefix + f"attn_{part}.bias", (0.1 * random.standard_normal(width)).astype(numpy.float32))
        if options.get("gpt_oss"):
            bias(prefix + "attn_output.bias", EMBED)
            # Sinks on the scale of the (peaked) scores, so they take a share of each head's attention.
            writer.add_tensor(prefix + "attn_sinks.weight", (16 * random.standard_normal(HEADS)).astype(numpy.float32))
        if options.get("qk_norm"):
            norm(prefix + "attn_q_norm.weight", head)
            norm(prefix + "attn_k_norm.weight", head)
        if olmo2:
            norm(prefix + "attn_q_norm.weight", query)
            norm(prefix + "attn_k_norm.weight", kv)
        tensor(prefix + "attn_output.weight", query, EMBED)
        norm(prefix + ("post_attention_norm.weight" if options.get("gpt_oss") or olmo2 else "ffn_norm.weight"), EMBED)
        if options.get("experts"):
            experts(prefix)
            continue
        if options.get("fused") or options.get("fused_ffn"):
            tensor(prefix + "ffn_up.weight", EMBED, 2 * FFN)
        else:
            tensor(prefix + "ffn_gate.weight", EMBED, FFN)
            tensor(prefix + "ffn_up.weight", EMBED, FFN)
        tensor(prefix + "ffn_down.weight", FFN, EMBED)
        if olmo2:
            norm(prefix + "post_ffw_norm.weight", EMBED)
    norm("token_embd_norm.weight" if attending is not None else "output_norm.weight", EMBED)
    if not options.get("tied"):
        tensor("output.weight", EMBED, vocabulary_size, scale=4.0)
    if options.get("rope_freqs"):
        writer.add_tensor("rope_freqs.weight", numpy.linspace(1.0, 8.0, head // 2).astype(numpy.float32))
    if options.get("long_rope"):
        # Short and long factors far apart: a session longer than the trained context (256) takes the long ones.
        writer.add_tensor("rope_factors_short.weight", numpy.linspace(1.0, 2.0, head // 2).astype(numpy.float32))
        writer.add_tensor("rope_factors_long.weight", numpy.linspace(1.0, 16.0, head // 2).astype(numpy.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(out / f"{name}.gguf")
