#!/usr/bin/env python3
"""Makes llama.cpp references for the synthetic models of scripts/make_synthetic_models.py with an
installed llama-cpp-python (its low-level C API), with the settings of ../shared/reference/README.md:
1 thread, F32 KV cache, no flash attention, the prompt tokenized with add_special and
parse_special and decoded in one call, then greedy (lowest id on ties) one token per call, not
stopping at end-of-generation tokens. Writes <name>.json and <name>.logits.bin (the logits after
the prompt and after the first greedy token, little-endian float32) into OUT_DIR.
Usage: make_synthetic_references.py MODELS_DIR OUT_DIR"""
import ctypes
import hashlib
import json
import pathlib
import sys

import llama_cpp
import numpy

from llama_reference import context_parameters, tokenize

models, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
PROMPTS = {
    "qwen2": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
    "qwen3": "The quick brown fox jumps over the lazy dog. 1234 + 5678 =",
    "phi3": "<|user|>\nTell me a story about a dragon.<|end|>\n<|assistant|>\n",
    "llama3": "<|start_header_id|>user<|end_header_id|>\n\nHello there!<|eot_id|>",
}
STEPS = 32

llama_cpp.llama_backend_init()
for name, prompt in PROMPTS.items():
    path = models / f"{name}.gguf"
    model_params = llama_cpp.llama_model_default_params()
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), model_params)
    context = llama_cpp.llama_init_from_model(model, context_parameters())
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    prompt_ids = tokenize(model, prompt, capacity=1024)

    def decode(ids):
        array = (llama_cpp.llama_token * len(ids))(*ids)
        assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(array, len(ids))) == 0
        pointer = llama_cpp.llama_get_logits_ith(context, -1)
        return numpy.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()

    logits = decode(prompt_ids)
    greedy, top1, margins, recorded = [], [], [], []
    for step in range(STEPS):
        if step < 2:
            recorded.append(logits.astype("<f4"))
        token = int(numpy.argmax(logits))  # the first maximum: lowest id wins ties
        ordered = numpy.sort(logits)
        probabilities = numpy.exp(logits - logits.max())
        top1.append(float(probabilities.max() / probabilities.sum()))
        margins.append(float(ordered[-1] - ordered[-2]))
        greedy.append(token)
        logits = decode([token])
    (out / f"{name}.logits.bin").write_bytes(numpy.concatenate(recorded).tobytes())
    reference = {
        "model": f"{name}.gguf",
        "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "reference": f"llama-cpp-python {llama_cpp.__version__}",
        "cases": [{"prompt": prompt, "prompt_ids": prompt_ids, "n_predict": STEPS, "greedy_ids": greedy,
                   "top1_prob": top1, "top2_margin": margins, "n_vocab": n_vocab, "n_logits": 2,
                   "logits_bin": f"{name}.logits.bin"}],
    }
    (out / f"{name}.json").write_text(json.dumps(reference, indent=1) + "\n")
    llama_cpp.llama_free(context)
    llama_cpp.llama_model_free(model)
    print(name, prompt_ids[:8], greedy[:8])
