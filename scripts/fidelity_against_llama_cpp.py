#!/usr/bin/env python3
"""How closely builds of Lumen follow llama.cpp's logits, teacher-forced.

First, the quantized test models of ../shared/models against llama.cpp's logits in
../shared/reference/quant-test-*.json (4 positions fed llama.cpp's greedy tokens): the largest
difference of a logit.

Then the two real models:

For each prompt, llama.cpp (an installed llama-cpp-python's C API, the settings of
../shared/reference/: 1 thread, F32 KV cache, no flash attention, BOS added, special tokens parsed,
the prompt in one batch) generates STEPS greedy tokens and keeps its logits at every step; each
Lumen build is fed the same tokens (`lumen generate --force-ids --dump-logits`, 2 threads, its
default 8-bit path) and compared step by step: KL(llama.cpp ‖ Lumen) and whether its argmax is
llama.cpp's token where llama.cpp's top-two margin exceeds 0.1.
Usage: fidelity_against_llama_cpp.py MODEL_CACHE SHARED LUMEN [LUMEN...]"""
import ctypes
import json
import pathlib
import subprocess
import sys
import tempfile

import llama_cpp
import numpy

from llama_reference import context_parameters, tokenize

cache, shared, builds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
FORMATS = ["f32", "f16", "q8_0", "q4_0", "q4_k", "q6_k", "q4_k_m"]
STEPS = 32
MODELS = {"SmolLM2-135M-Instruct Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}
PROMPTS = ["The capital of France is", "Once upon a time, in a small village,", "def fibonacci(n):",
           "The best way to learn a language is", "In 1969, the first humans", "Water boils at",
           "My favourite recipe for pancakes", "The theory of relativity states that", "import numpy as np\n",
           "Dear Sir or Madam,", "The stock market today", "Photosynthesis is the process"]


def llama_greedy(model, prompt):
    """llama.cpp's STEPS greedy tokens after `prompt` and its logits before each."""
    context = llama_cpp.llama_init_from_model(model, context_parameters())
    n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
    ids = tokenize(model, prompt)
    count = len(ids)
    # A batch points into its token array: keep the array alive until the decode is done.
    tokens = (llama_cpp.llama_token * count)(*ids)
    assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(tokens, count)) == 0
    rows, ids = [], []
    for _ in range(STEPS):
        logits = llama_cpp.llama_get_logits_ith(context, -1)
        rows.append(numpy.ctypeslib.as_array(ctypes.cast(logits, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy())
        ids.append(int(rows[-1].argmax()))
        token = (llama_cpp.llama_token * 1)(ids[-1])
        assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(token, 1)) == 0
    llama_cpp.llama_free(context)
    return numpy.array(rows), ids


def log_softmax(rows):
    shifted = rows.astype(numpy.float64) - rows.max(axis=-1, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=-1, keepdims=True))


def quantized_test_models(scratch):
    print("| quant-test model | " + " | ".join(f"{build}: largest logit difference" for build in builds) + " |")
    print("|---|" + "---:|" * len(builds))
    for format in FORMATS:
        case = json.loads((shared / "reference" / f"quant-test-{format}.json").read_text())["cases"][0]
        expected = numpy.fromfile(shared / "reference" / case["logits_bin"], dtype=numpy.float32).reshape(case["n_logits"], -1)
        differences = []
        for build in builds:
            dump = pathlib.Path(scratch) / "logits.bin"
            subprocess.run([build, "generate", str(shared / "models" / f"quant-test-{format}.gguf"), case["prompt"], "--temp", "0",
                            "-n", str(len(expected)), "--force-ids", ",".join(map(str, case["greedy_ids"][:len(expected)])),
                            "--dump-logits", str(dump), "--no-log", "-t", "1"], check=True, capture_output=True)
            ours = numpy.fromfile(dump, dtype=numpy.float32).reshape(-1, expected.shape[1])[:len(expected)]
            differences.append(float(numpy.abs(ours - expected).max()))
        print(f"| {format} | " + " | ".join(f"{difference:.4f}" for difference in differences) + " |", flush=True)
    print()


llama_cpp.llama_backend_init()
with tempfile.TemporaryDirectory() as scratch:
    quantized_test_models(scratch)
print("| model | build | KL mean | KL p95 | KL max | argmax agreement (margin > 0.1) |")
print("|---|---|---:|---:|---:|---:|")
with tempfile.TemporaryDirectory() as scratch:
    dump = pathlib.Path(scratch) / "logits.bin"
    for name, file in MODELS.items():
        path = cache / file
        model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
        results = {build: ([], 0, 0) for build in builds}
        for prompt in PROMPTS:
            expected, ids = llama_greedy(model, prompt)
            reference = log_softmax(expected)
            ordered = numpy.sort(expected, axis=-1)
            clear = ordered[:, -1] - ordered[:, -2] > 0.1
            for build in builds:
                subprocess.run([build, "generate", str(path), prompt, "--temp", "0", "-n", str(STEPS), "--force-ids", ",".join(map(str, ids)),
                                "--dump-logits", str(dump), "--no-log", "-t", "2"], check=True, capture_output=True)
                ours = numpy.fromfile(dump, dtype=numpy.float32).reshape(-1, expected.shape[1])[:STEPS]
                divergences, agreed, counted = results[build]
                divergences += list((numpy.exp(reference) * (reference - log_softmax(ours))).sum(axis=-1))
                results[build] = (divergences, agreed + int(((ours.argmax(axis=-1) == numpy.array(ids)) & clear).sum()), counted + int(clear.sum()))
        llama_cpp.llama_model_free(model)
        for build, (divergences, agreed, counted) in results.items():
            values = numpy.array(divergences)
            print(f"| {name} | {build} | {values.mean():.4f} | {numpy.percentile(values, 95):.4f} | {values.max():.4f} | {agreed}/{counted} |", flush=True)
