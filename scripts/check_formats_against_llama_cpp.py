#!/usr/bin/env python3
"""Checks Lumen's Q5_1, Q2_K, Q3_K, IQ4_NL and IQ4_XS kernels inside a whole model against
llama.cpp, with an installed llama-cpp-python: llama.cpp quantizes the 110M benchmark model
(MODELS_DIR/bench-110M-f32.gguf, `make_bench_models.py`) to Q5_1, Q2_K, Q3_K_M, IQ4_NL and IQ4_XS
(files shared with bench_formats.py), then both engines process the same prompt (F32 KV cache)
and feed llama.cpp's greedy token; the logits after the prompt (prompt path) and after that token
(generation path, Lumen's integer kernels) are compared: same argmax, cosine, KL(llama.cpp ‖ Lumen).
Usage: check_formats_against_llama_cpp.py LUMEN MODELS_DIR"""
import ctypes
import json
import pathlib
import subprocess
import sys
import tempfile

import llama_cpp
import numpy

lumen, folder = sys.argv[1], pathlib.Path(sys.argv[2])
PROMPT = "Once upon a time, in a small village by the sea, there lived"
FTYPES = {"Q5_1": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_1, "Q2_K": llama_cpp.LLAMA_FTYPE_MOSTLY_Q2_K,
          "Q3_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q3_K_M, "IQ4_NL": llama_cpp.LLAMA_FTYPE_MOSTLY_IQ4_NL,
          "IQ4_XS": llama_cpp.LLAMA_FTYPE_MOSTLY_IQ4_XS}


def softmax(x):
    e = numpy.exp(x - x.max())
    return e / e.sum()


def compare(theirs, ours):
    theirs, ours = theirs.astype(numpy.float64), ours.astype(numpy.float64)
    p, q = softmax(theirs), softmax(ours)
    cosine = numpy.dot(theirs, ours) / numpy.linalg.norm(theirs) / numpy.linalg.norm(ours)
    return int(theirs.argmax()) == int(ours.argmax()), cosine, float((p * (numpy.log(p) - numpy.log(q))).sum())


llama_cpp.llama_backend_init()
print("| format | prompt ids | after the prompt: argmax, cosine, KL | after one token: argmax, cosine, KL |")
print("|---|---|---|---|")
for kind, ftype in FTYPES.items():
    path = folder / f"bench-110M-{kind.lower()}.gguf"
    if not path.exists():
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = ftype
        assert llama_cpp.llama_model_quantize(str(folder / "bench-110M-f32.gguf").encode(), str(path).encode(), params) == 0
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    context_params = llama_cpp.llama_context_default_params()
    context_params.n_ctx = 256
    context_params.type_k = context_params.type_v = llama_cpp.GGML_TYPE_F32
    context = llama_cpp.llama_init_from_model(model, context_params)
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    buffer = (llama_cpp.llama_token * 256)()
    count = llama_cpp.llama_tokenize(vocab, PROMPT.encode(), len(PROMPT.encode()), buffer, 256, True, True)
    prompt_ids = list(buffer[:count])

    def decode(ids):
        array = (llama_cpp.llama_token * len(ids))(*ids)
        assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(array, len(ids))) == 0
        pointer = ctypes.cast(llama_cpp.llama_get_logits_ith(context, -1), ctypes.POINTER(ctypes.c_float))
        return numpy.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy()

    first = decode(prompt_ids)
    token = int(first.argmax())
    second = decode([token])
    with tempfile.NamedTemporaryFile(suffix=".bin") as dump:
        out = subprocess.run([lumen, "generate", str(path), PROMPT, "--temp", "0", "-n", "2", "--json", "--dump-logits", dump.name,
                              "--force-ids", f"{token},{token}"], capture_output=True, text=True, check=True).stdout
        ours = numpy.fromfile(dump.name, dtype="<f4").reshape(2, n_vocab)
    same_prompt = json.loads(out.strip().splitlines()[-1])["prompt_ids"] == prompt_ids
    cells = [f"{'same' if a else 'DIFFERENT'}, {c:.5f}, {k:.5f}" for a, c, k in (compare(first, ours[0]), compare(second, ours[1]))]
    print(f"| {kind} | {'same' if same_prompt else 'DIFFERENT'} | {cells[0]} | {cells[1]} |", flush=True)
    llama_cpp.llama_free(context)
    llama_cpp.llama_model_free(model)
