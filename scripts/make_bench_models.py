"""Writes random-weight LLaMA GGUF models with the shapes of karpathy's TinyStories 15M and 110M
and of TinyLlama 1.1B, for `lumen bench`. The vocabulary (32000 tokens) is copied from
llama2-vocab.gguf. Usage: make_bench_models.py SHARED_MODELS_DIR OUT_DIR [15M 110M 1.1B]"""
import os
import sys

import numpy as np
import gguf

# "tied": the output matrix is the token embedding (no output.weight), as in karpathy's models.
SHAPES = {
    "15M": dict(dim=288, layers=6, heads=6, kv_heads=6, ffn=768, tied=True, types=["F32", "Q8_0", "Q4_0"]),
    "110M": dict(dim=768, layers=12, heads=12, kv_heads=12, ffn=2048, tied=True, types=["F32", "Q8_0", "Q4_0"]),
    "1.1B": dict(dim=2048, layers=22, heads=32, kv_heads=4, ffn=5632, tied=False, types=["F32", "Q8_0", "Q4_0"]),
}
TYPES = {"F32": gguf.GGMLQuantizationType.F32, "Q8_0": gguf.GGMLQuantizationType.Q8_0, "Q4_0": gguf.GGMLQuantizationType.Q4_0}
VOCAB = 32000


def vocabulary(path):
    reader = gguf.GGUFReader(path)
    field = reader.fields
    tokens = [bytes(field["tokenizer.ggml.tokens"].parts[i]) for i in field["tokenizer.ggml.tokens"].data]
    scores = [float(field["tokenizer.ggml.scores"].parts[i][0]) for i in field["tokenizer.ggml.scores"].data]
    types = [int(field["tokenizer.ggml.token_type"].parts[i][0]) for i in field["tokenizer.ggml.token_type"].data]
    return tokens, scores, types


def write(name, shape, kind, vocab, out_dir):
    path = os.path.join(out_dir, f"bench-{name}-{kind.lower()}.gguf")
    if os.path.exists(path):
        print("exists:", path)
        return
    rng = np.random.default_rng(1)
    dim, ffn, heads, kv_heads = shape["dim"], shape["ffn"], shape["heads"], shape["kv_heads"]
    kv_dim = dim // heads * kv_heads
    writer = gguf.GGUFWriter(path + ".tmp", "llama")
    writer.add_name(f"bench-{name}")
    writer.add_context_length(2048)
    writer.add_embedding_length(dim)
    writer.add_block_count(shape["layers"])
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(dim // heads)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    tokens, scores, types = vocab
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)

    def matrix(tensor_name, rows, columns):
        weights = (rng.standard_normal((rows, columns), dtype=np.float32) * 0.02).astype(np.float32)
        quant = TYPES[kind]
        data = weights if quant == gguf.GGMLQuantizationType.F32 else gguf.quants.quantize(weights, quant)
        writer.add_tensor(tensor_name, data, raw_dtype=quant)

    def norm(tensor_name):
        writer.add_tensor(tensor_name, np.ones(dim, dtype=np.float32))

    matrix("token_embd.weight", VOCAB, dim)
    for layer in range(shape["layers"]):
        prefix = f"blk.{layer}."
        norm(prefix + "attn_norm.weight")
        matrix(prefix + "attn_q.weight", dim, dim)
        matrix(prefix + "attn_k.weight", kv_dim, dim)
        matrix(prefix + "attn_v.weight", kv_dim, dim)
        matrix(prefix + "attn_output.weight", dim, dim)
        norm(prefix + "ffn_norm.weight")
        matrix(prefix + "ffn_gate.weight", ffn, dim)
        matrix(prefix + "ffn_up.weight", ffn, dim)
        matrix(prefix + "ffn_down.weight", dim, ffn)
    norm("output_norm.weight")
    if not shape["tied"]:
        matrix("output.weight", VOCAB, dim)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.rename(path + ".tmp", path)
    print("wrote", path, os.path.getsize(path))


def main():
    shared, out_dir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or list(SHAPES)
    os.makedirs(out_dir, exist_ok=True)
    vocab = vocabulary(os.path.join(shared, "llama2-vocab.gguf"))
    for name in names:
        for kind in SHAPES[name]["types"]:
            write(name, SHAPES[name], kind, vocab, out_dir)


if __name__ == "__main__":
    main()
