#!/usr/bin/env python3
"""Writes LoRA adapters in llama.cpp's adapter GGUF format (as convert_lora_to_gguf.py writes them:
general.type "adapter", adapter.type "lora", adapter.lora.alpha, <weight>.lora_a [columns, rank] and
<weight>.lora_b [rank, rows]) for the synthetic models and the two real ones, from a fixed seed, so
the same files come out every time (llama.cpp's own random-weight models, `make arch-models`, are
adapted too: their weights carry per-tensor scales, which an adapter's product meets before the
bias in attention and after it in the feed-forward): the references in Tests/reference/lora/ were made from them
with llama.cpp (scripts/make_lora_references.py).

Each adapter adapts every weight llama.cpp multiplies through build_lora_mm that the model has —
attention, feed-forward (shared experts included), routers, recurrent and short-convolution
projections, Gemma 4's per-layer projections, and the output matrix when it is not the embedding —
with random A of variance 1/columns and B scaled so that B·A·x is about `strength` times the
weight's own product (the weight's spread read from its first 64 rows; alpha = rank, so at scale 1
the product is added as it is): 0.3 for the synthetic models of two to six layers, 0.05 for the real ones,
whose thirty layers compound it (they still write sentences, other ones). The `-experts` adapters
of the mixtures of experts adapt their experts' stacked weights alone (build_lora_mm_id), a pair
per expert.
Usage: make_lora_adapters.py SYNTHETIC_DIR ARCH_MODELS_DIR MODEL_CACHE OUT_DIR"""
import pathlib
import re
import sys

import gguf
import numpy

from gguf_header import read_tensor_layout

# The weights llama.cpp's graphs multiply through build_lora_mm, by their name after blk.N.
ADAPTED = re.compile(r"^(blk\.\d+\.(attn_(q|k|v|qkv|output|gate)|ffn_(gate|up|down)(_shexp)?|ffn_gate_inp|shortconv\.(in_proj|out_proj)"
                     r"|ssm_(alpha|beta|out)|inp_gate|proj)|output)\.weight$")

# The experts' stacked weights, which llama.cpp multiplies through build_lora_mm_id: an adapter of
# them holds a pair per expert, lora_a [columns, rank, experts] and lora_b [rank, rows, experts].
EXPERTS = re.compile(r"^blk\.\d+\.ffn_(gate|up|down|gate_up)_exps\.weight$")

# The models adapted at rank 8 with llama.cpp's references beside them: the synthetic ones, then four
# of llama.cpp's random-weight ones; and the synthetic mixtures of experts again, their experts alone.
SYNTHETIC = ["qwen2", "qwen3", "phi3", "phi3long", "llama3", "qwen3moe", "smollm3", "qwen35", "qwen35moe", "gptoss", "lfm2moe", "gemma4",
             "gemma4moe", "olmo2"]
RANDOM_WEIGHT = ["llama-dense", "phi3-dense", "qwen35-dense", "gemma3-dense"]
MIXTURES = ["qwen3moe", "qwen35moe", "gptoss", "lfm2moe", "gemma4moe"]


def adapters(synthetic, architectures, cache):
    """Every adapter, by name: (where its base model comes from — synthetic, arch or real —, the base
    model's path, rank, tensor type, strength, seed, the weights it adapts)."""
    table = {f"{name}-r8": ("synthetic", synthetic / f"{name}.gguf", 8, "f32", 0.3, index, ADAPTED) for index, name in enumerate(SYNTHETIC)}
    table.update({f"{name}-r8": ("arch", architectures / f"{name}.gguf", 8, "f32", 0.3, 50 + index, ADAPTED)
                  for index, name in enumerate(RANDOM_WEIGHT)})
    table.update({f"{name}-experts-r8": ("synthetic", synthetic / f"{name}.gguf", 8, "f32", 0.3, 70 + index, EXPERTS)
                  for index, name in enumerate(MIXTURES)})
    smollm2, gemma3 = cache / "SmolLM2-135M-Instruct.Q4_1.gguf", cache / "gemma-3-270m-q4_k_m.gguf"
    table.update({
        "smollm2-r16": ("real", smollm2, 16, "f32", 0.05, 100, ADAPTED),
        "smollm2-r8": ("real", smollm2, 8, "f32", 0.05, 101, ADAPTED),
        "smollm2-r16-f16": ("real", smollm2, 16, "f16", 0.05, 102, ADAPTED),
        "gemma3-r16": ("real", gemma3, 16, "f32", 0.05, 103, ADAPTED),
    })
    return table


def spread(path, shape, kind, offset):
    """The root mean square of a base weight's first 64 rows (dequantized; an expert's, of experts)."""
    block, block_bytes = gguf.GGML_QUANT_SIZES[kind]
    rows = min(64, shape[1])
    raw = numpy.fromfile(path, dtype=numpy.uint8, count=rows * shape[0] // block * block_bytes, offset=offset)
    values = numpy.asarray(gguf.quants.dequantize(raw.reshape(rows, -1), kind), dtype=numpy.float32)
    return float(numpy.sqrt(numpy.mean(values ** 2)))


def write(out, name, base_path, rank, kind, strength, seed, adapted):
    metadata, tensors = read_tensor_layout(base_path)
    architecture = metadata["general.architecture"]
    random = numpy.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(out / f"{name}.gguf"), architecture)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(rank))
    dtype = numpy.float16 if kind == "f16" else numpy.float32
    for tensor, shape, tensor_type, offset in sorted(tensors):
        if not adapted.match(tensor) or len(shape) != (3 if adapted is EXPERTS else 2):
            continue
        columns, rows, experts = shape[0], shape[1], shape[2:]
        a = random.standard_normal((*experts, rank, columns)) / numpy.sqrt(columns)
        b = random.standard_normal((*experts, rows, rank)) * strength * spread(base_path, shape, tensor_type, offset) * numpy.sqrt(columns / rank)
        stem = tensor[:-len(".weight")]
        writer.add_tensor(f"{stem}.weight.lora_a", a.astype(dtype))
        writer.add_tensor(f"{stem}.weight.lora_b", b.astype(dtype))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main():
    synthetic, architectures, cache, out = (pathlib.Path(argument) for argument in sys.argv[1:5])
    out.mkdir(parents=True, exist_ok=True)
    for name, (_source, base, rank, kind, strength, seed, adapted) in adapters(synthetic, architectures, cache).items():
        write(out, name, base, rank, kind, strength, seed, adapted)
        print(name, base.name)


if __name__ == "__main__":
    main()
