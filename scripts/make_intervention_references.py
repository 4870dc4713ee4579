#!/usr/bin/env python3
"""Makes llama.cpp references for interventions inside the forward pass (head and block ablation,
edits that scale and add to chosen positions, heads and neurons, activation patching) on the two real models, with an installed llama-cpp-python's low-level C API:
an eval callback (`cb_eval`) on the graph's named tensors changes them in place as the graph
computes, so every later node reads the changed values. Settings as ../shared/reference/README.md
(1 thread, F32 KV cache, no flash attention, BOS added, special tokens parsed, the prompt decoded in
one batch). For each case, writes the last position's log-probabilities of llama.cpp's 20 most
likely tokens, with and without the intervention, into OUT_DIR/interventions.json.
Usage: make_intervention_references.py MODELS_DIR OUT_DIR"""
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
TOP = 20


# Each model's tensor names for the points Lumen exposes: a block's attention output (after the
# output projection, and Gemma's post-attention norm), its feed-forward output, and the residual
# stream after it. Llama's graph names both the feed-forward output and the sum after it
# "ffn_out"; the first one computed is the output.
POINTS = {
    "SmolLM2-135M-Instruct.Q4_1.gguf": {"attn_out": "attn_out", "ffn_out": "ffn_out", "resid": "l_out", "heads": "kqv_out", "z": "kqv_out",
                                        "mlp_post": "ffn_swiglu", "resid_mid": "ffn_inp", "embed": "embd"},
    "gemma-3-270m-q4_k_m.gguf": {"attn_out": "attn_post_norm", "ffn_out": "ffn_post_norm", "resid": "l_out", "heads": "kqv_out", "z": "kqv_out",
                                 "mlp_post": "ffn_geglu", "resid_mid": "sa_out", "embed": "inp_scaled"},
}
CASES = [
    {"name": "ablate-heads", "prompt": "The capital of France is", "ablate": {"point": "heads", "block": 0, "heads": [0, 1, 2, 3]}},
    {"name": "ablate-attention", "prompt": "The capital of France is", "ablate": {"point": "attn_out", "block": 2}},
    {"name": "ablate-feed-forward", "prompt": "The capital of France is", "ablate": {"point": "ffn_out", "block": 0}},
    {"name": "scale-neurons", "prompt": "The capital of France is",
     "edit": {"point": "mlp_post", "block": 1, "neurons": list(range(0, 1536, 31)), "scale": 20, "positions": [1, 3, 4]}},
    {"name": "add-residual", "prompt": "The capital of France is",
     "edit": {"point": "resid_mid", "block": 2, "neurons": [0, 7, 100], "scale": 1, "add": [30.0, -40.0, 25.0]}},
    {"name": "add-embedding", "prompt": "The capital of France is",
     "edit": {"point": "embed", "neurons": [1, 2, 3, 4], "positions": [2], "add": [3.0, -3.0, 3.0, -3.0]}},
    {"name": "scale-head", "prompt": "The capital of France is", "edit": {"point": "z", "block": 0, "heads": [1, 2], "scale": -2}},
    {"name": "patch-residual", "prompt": "When Mary and John went to the store, John gave a drink to",
     "source": "When Mary and John went to the store, Mary gave a drink to", "patch": {"point": "resid", "block": 4}},
]


def run(model, prompt, edit=None, capture=None):
    """The last position's logits of `prompt`; `edit(name, array)` may change tensors in place,
    `capture` (a name) keeps a copy of that tensor."""
    kept = {}

    @llama_cpp.ggml_backend_sched_eval_callback
    def callback(pointer, ask, _):
        tensor = Tensor.from_address(pointer)
        name = tensor.name.decode()
        if ask:
            return edit is not None or name == capture
        if tensor.type != 0 or tensor.nb[0] != 4:  # F32 only
            return True
        shape = [tensor.ne[i] for i in range(4)]
        if tensor.nb[1] != 4 * shape[0] or tensor.nb[2] != tensor.nb[1] * shape[1]:
            return True  # not contiguous
        count = shape[0] * shape[1] * shape[2] * shape[3]
        array = numpy.ctypeslib.as_array(ctypes.cast(tensor.data, ctypes.POINTER(ctypes.c_float)), shape=(count,))
        rows = array.reshape(-1, shape[0])
        if name == capture and name not in kept:
            kept[name] = rows.copy()
        if edit is not None:
            edit(name, rows)
        return True

    context = llama_cpp.llama_init_from_model(model, context_parameters(512, callback))
    vocab = llama_cpp.llama_model_get_vocab(model)
    ids = tokenize(model, prompt)
    count = len(ids)
    array = (llama_cpp.llama_token * count)(*ids)
    assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(array, count)) == 0
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    logits = numpy.ctypeslib.as_array(ctypes.cast(llama_cpp.llama_get_logits_ith(context, -1), ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()
    llama_cpp.llama_free(context)
    return ids, logits, kept.get(capture)


def log_softmax(logits):
    shifted = logits.astype(numpy.float64) - logits.max()
    return shifted - numpy.log(numpy.exp(shifted).sum())


def top(logits):
    logprobs = log_softmax(logits)
    order = numpy.argsort(-logits, kind="stable")[:TOP]
    return {"ids": [int(i) for i in order], "logprobs": [round(float(logprobs[i]), 6) for i in order]}


llama_cpp.llama_backend_init()
reference = {"reference": f"llama-cpp-python {llama_cpp.__version__}", "top": TOP, "models": {}}
for file, names in POINTS.items():
    path = models / file
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    head_count = llama_cpp.llama_model_n_head(model)
    cases = []
    for case in CASES:
        ids, plain, _ = run(model, case["prompt"])
        if "ablate" in case:
            spec = case["ablate"]
            target = f"{names[spec['point']]}-{spec['block']}"
            seen = set()

            def edit(name, rows):
                if name != target or name in seen:
                    return
                seen.add(name)
                if spec["point"] == "heads":
                    # kqv_out is [tokens][heads × head dimension]; Gemma's heads are wider than n_embd / n_head.
                    head_dimension = rows.shape[1] // head_count
                    for head in spec["heads"]:
                        rows[:, head * head_dimension:(head + 1) * head_dimension] = 0
                else:
                    rows[:] = 0
        elif "edit" in case:
            spec = case["edit"]
            # The embeddings are one node, not one per block.
            target = names[spec["point"]] if "block" not in spec else f"{names[spec['point']]}-{spec['block']}"
            seen = set()

            def edit(name, rows):
                if name != target or name in seen:
                    return
                seen.add(name)
                # x ← x · scale + add at the chosen positions, in each chosen head's slice (the
                # whole row without heads), at the chosen neurons of it.
                head_dimension = rows.shape[1] // head_count
                slices = [(h * head_dimension, head_dimension) for h in spec["heads"]] if "heads" in spec else [(0, rows.shape[1])]
                positions = spec.get("positions", range(rows.shape[0]))
                for position in positions:
                    for start, length in slices:
                        neurons = numpy.array(spec.get("neurons", range(length))) + start
                        rows[position, neurons] = rows[position, neurons] * spec.get("scale", 1) + numpy.array(spec.get("add", 0), dtype=numpy.float32)
        else:
            spec = case["patch"]
            target = f"{names[spec['point']]}-{spec['block']}"
            source_ids, _, source = run(model, case["source"], capture=target)
            assert len(source_ids) == len(ids), "the two prompts must have as many tokens"
            # The positions where the prompts differ take the source's residual stream.
            spec = {**spec, "positions": [p for p, (a, b) in enumerate(zip(ids, source_ids)) if a != b]}
            case = {**case, "patch": spec}
            seen = set()

            def edit(name, rows):
                if name != target or name in seen:
                    return
                seen.add(name)
                for position in spec["positions"]:
                    rows[position] = source[position]
        _, changed, _ = run(model, case["prompt"], edit=edit)
        assert seen, f"{target} not seen"
        shift = numpy.exp(log_softmax(plain)) @ (log_softmax(plain) - log_softmax(changed))
        cases.append({**case, "tokens": ids, "plain": top(plain), "changed": top(changed), "kl_plain_changed": round(float(shift), 6)})
        print(file, case["name"], "KL(plain‖changed) =", round(float(shift), 4), "top", top(plain)["ids"][0], "→", top(changed)["ids"][0])
    reference["models"][file] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "cases": cases}
    llama_cpp.llama_model_free(model)
(out / "interventions.json").write_text(json.dumps(reference, indent=1) + "\n")
