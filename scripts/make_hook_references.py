#!/usr/bin/env python3
"""Makes llama.cpp references for Lumen's hook points (`lumen trace --points …`) on the two real
models, with an installed llama-cpp-python's low-level C API: an eval callback (`cb_eval`) copies
the graph nodes that hold each point, for the first and the last block, in the layouts
`lumen trace` writes (docs/language.md). The prompt is decoded in one batch with every position's
logits asked for (so the final norm and the logits exist at every position), with the settings of
../shared/reference/README.md (1 thread, F32 KV cache, no flash attention, BOS added, special
tokens parsed) — and once more with llama.cpp's default F16 cache: the distance between the two
runs, per point, is llama.cpp's own spread, which the test's tolerance is a multiple of.

Writes OUT_DIR/hooks.npz (`<model>/<point>` arrays from the F32 run; `<model>/logit_ids`, the
vocabulary ids whose logits are kept: each position's 16 likeliest and every 256th) and
OUT_DIR/hooks.json (the prompt, tokens, blocks, and per point the spread: `distance(F16, F32)`,
each block's RMS of the difference over the RMS of the F32 values, averaged over the blocks kept,
so that a block of large activations — Gemma's first — does not drown the others).
Usage: make_hook_references.py MODELS_DIR OUT_DIR"""
import ctypes
import hashlib
import json
import pathlib
import sys

import llama_cpp
import numpy

from llama_reference import Tensor, context_parameters, tokenize

models, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
PROMPT = "The capital of France is"

# Each model's graph node for each point: (name, which of the nodes of that name: 0 the first,
# -1 the last). "{L}" is the block; resid_pre is the block before's resid_post (the embeddings
# for block 0), made below.
NODES = {
    "SmolLM2-135M-Instruct.Q4_1.gguf": {
        "embed": ("embd", 0), "q": ("Qcur-{L}", -1), "k": ("Kcur-{L}", -1), "v": ("Vcur-{L}", -1), "z": ("kqv_out-{L}", 0),
        "pattern": ("kq_soft_max-{L}", 0), "attn_out": ("attn_out-{L}", 0), "resid_mid": ("ffn_inp-{L}", 0),
        "mlp_pre": ("ffn_gate-{L}", 0), "mlp_post": ("ffn_swiglu-{L}", 0), "mlp_out": ("ffn_out-{L}", 0), "resid_post": ("l_out-{L}", 0),
        "ln_final": ("result_norm", 0), "logits": ("result_output", 0),
    },
    "gemma-3-270m-q4_k_m.gguf": {
        "embed": ("inp_scaled", 0), "q": ("Qcur-{L}", -1), "k": ("Kcur-{L}", -1), "v": ("Vcur-{L}", -1), "z": ("kqv_out-{L}", 0),
        "pattern": ("kq_soft_max-{L}", 0), "attn_out": ("attn_post_norm-{L}", 0), "resid_mid": ("sa_out-{L}", 0),
        "mlp_pre": ("ffn_gate-{L}", 0), "mlp_post": ("ffn_geglu-{L}", 0), "mlp_out": ("ffn_post_norm-{L}", 0), "resid_post": ("l_out-{L}", 0),
        "ln_final": ("result_norm", 0), "logits": ("result_output", 0),
    },
}
def distance(value, reference, per_block):
    """The relative RMS distance of `value` from `reference`, averaged over the blocks (axis 0)."""
    parts = zip(value, reference) if per_block else [(value, reference)]
    return float(numpy.mean([numpy.sqrt(((v - r) ** 2).mean() / (r ** 2).mean()) for v, r in parts]))


PER_BLOCK = ["q", "k", "v", "z", "pattern", "attn_out", "resid_mid", "mlp_pre", "mlp_post", "mlp_out", "resid_post"]


def capture(model, ids, cache_type):
    """Every contiguous F32 node of one decode of `ids` (all positions' logits), by name, in order."""
    nodes = {}

    @llama_cpp.ggml_backend_sched_eval_callback
    def callback(pointer, ask, _):
        tensor = Tensor.from_address(pointer)
        if ask:
            return True
        shape = [tensor.ne[i] for i in range(4)]
        if tensor.type != 0 or tensor.nb[0] != 4 or tensor.nb[1] != 4 * shape[0] or tensor.nb[2] != tensor.nb[1] * shape[1]:
            return True
        count = shape[0] * shape[1] * shape[2] * shape[3]
        array = numpy.ctypeslib.as_array(ctypes.cast(tensor.data, ctypes.POINTER(ctypes.c_float)), shape=(count,))
        # ggml's ne[0] is the fastest axis: NumPy's shape is the reverse.
        nodes.setdefault(tensor.name.decode(), []).append(array.reshape(shape[::-1]).copy())
        return True

    params = context_parameters(512, callback)
    params.type_k = params.type_v = cache_type
    context = llama_cpp.llama_init_from_model(model, params)
    batch = llama_cpp.llama_batch_init(len(ids), 0, 1)
    for index, token in enumerate(ids):
        batch.token[index], batch.pos[index], batch.n_seq_id[index], batch.logits[index] = token, index, 1, 1
        batch.seq_id[index][0] = 0
    batch.n_tokens = len(ids)
    assert llama_cpp.llama_decode(context, batch) == 0
    llama_cpp.llama_batch_free(batch)
    llama_cpp.llama_free(context)
    return nodes


def points(nodes, names, blocks, count):
    """The points in `lumen trace`'s layouts: [blocks][tokens]… per block, [tokens]… once."""
    def node(point, block=None, axes=2):
        """The node of `point` in `block` with its `axes` innermost axes (ggml's ne[0] last)."""
        name, which = names[point]
        value = nodes[name.format(L=block)][which]
        return value.reshape(value.shape[4 - axes:]) if axes < 4 else value
    made = {"embed": node("embed"), "ln_final": node("ln_final"), "logits": node("logits")}
    for point in PER_BLOCK:
        rows = []
        for block in blocks:
            if point == "pattern":
                value = node(point, block, axes=3)[:, :, :count]  # [heads][queries][keys]
            elif point in ("q", "k", "v"):
                value = node(point, block, axes=3)  # [tokens][heads][head_dim]
            elif point == "z":
                value = node(point, block).reshape(count, node("q", block, axes=3).shape[1], -1)
            else:
                value = node(point, block)
            rows.append(value)
        made[point] = numpy.stack(rows)
    made["resid_pre"] = numpy.stack([made["embed"] if block == 0 else node("resid_post", block - 1) for block in blocks])
    return made


llama_cpp.llama_backend_init()
arrays, metadata = {}, {"reference": f"llama-cpp-python {llama_cpp.__version__}", "prompt": PROMPT, "models": {}}
for file, names in NODES.items():
    path = models / file
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    ids = tokenize(model, PROMPT)
    blocks = [0, llama_cpp.llama_model_n_layer(model) - 1]
    exact = points(capture(model, ids, llama_cpp.GGML_TYPE_F32), names, blocks, len(ids))
    default = points(capture(model, ids, llama_cpp.GGML_TYPE_F16), names, blocks, len(ids))
    logits = exact["logits"]
    vocabulary = logits.shape[-1]
    kept = sorted(set(numpy.argsort(-logits, axis=-1)[:, :16].ravel().tolist()) | set(range(0, vocabulary, 256)))
    key = file.split("-")[0].lower()
    spreads = {}
    for point, value in exact.items():
        spreads[point] = distance(default[point], value, point in PER_BLOCK or point == "resid_pre")
        arrays[f"{key}/{point}"] = value[..., kept] if point == "logits" else value
    arrays[f"{key}/logit_ids"] = numpy.array(kept, dtype=numpy.float32)
    metadata["models"][key] = {"file": file, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "tokens": ids, "blocks": blocks,
                               "spread": {point: float(f"{spread:.3g}") for point, spread in sorted(spreads.items())}}
    print(file, {point: f"{spread:.2g}" for point, spread in sorted(spreads.items())})
    llama_cpp.llama_model_free(model)
numpy.savez(out / "hooks.npz", **{name: value.astype(numpy.float32) for name, value in arrays.items()})
(out / "hooks.json").write_text(json.dumps(metadata, indent=1) + "\n")
