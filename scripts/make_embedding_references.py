#!/usr/bin/env python3
"""Makes llama.cpp references for text embeddings on the two real models, with an installed
llama-cpp-python's low-level C API: a context with embeddings on and a pooling type (mean, last,
cls), the text tokenized with BOS added and special tokens parsed and decoded in one batch, the
sequence's pooled embedding (`llama_get_embeddings_seq`: the final norm's output, pooled) and
its Euclidean normalization, as `llama-embedding` prints it by default (`--embd-normalize 2`).
Writes OUT_DIR/embeddings.json.
Usage: make_embedding_references.py MODELS_DIR OUT_DIR"""
import ctypes
import hashlib
import json
import pathlib
import sys

import llama_cpp
import numpy

from llama_reference import context_parameters

models, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]
TEXTS = ["The capital of France is Paris.", "A cat sat on the mat and looked at the birds.", "Quantum chromodynamics describes the strong force."]
POOLING = {"mean": llama_cpp.LLAMA_POOLING_TYPE_MEAN, "last": llama_cpp.LLAMA_POOLING_TYPE_LAST, "cls": llama_cpp.LLAMA_POOLING_TYPE_CLS}

llama_cpp.llama_backend_init()
reference = {"reference": f"llama-cpp-python {llama_cpp.__version__}", "texts": TEXTS, "models": {}}
for file in MODELS:
    path = models / file
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    vocab = llama_cpp.llama_model_get_vocab(model)
    width = llama_cpp.llama_model_n_embd(model)
    entry = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "n_embd": width, "pooling": {}}
    for name, pooling in POOLING.items():
        params = context_parameters()
        params.n_ubatch = 512
        params.embeddings = True
        params.pooling_type = pooling
        vectors = []
        for text in TEXTS:
            context = llama_cpp.llama_init_from_model(model, params)
            encoded = text.encode()
            buffer = (llama_cpp.llama_token * 512)()
            count = llama_cpp.llama_tokenize(vocab, encoded, len(encoded), buffer, 512, True, True)
            batch = llama_cpp.llama_batch_init(count, 0, 1)
            for index in range(count):
                batch.token[index] = buffer[index]
                batch.pos[index] = index
                batch.n_seq_id[index] = 1
                batch.seq_id[index][0] = 0
                batch.logits[index] = True
            batch.n_tokens = count
            assert llama_cpp.llama_decode(context, batch) == 0
            pooled = numpy.ctypeslib.as_array(ctypes.cast(llama_cpp.llama_get_embeddings_seq(context, 0), ctypes.POINTER(ctypes.c_float)), shape=(width,)).copy()
            llama_cpp.llama_batch_free(batch)
            llama_cpp.llama_free(context)
            norm = float(numpy.linalg.norm(pooled.astype(numpy.float64)))
            vectors.append({"tokens": count, "norm": round(norm, 6), "normalized": [round(float(v) / norm, 7) for v in pooled]})
        entry["pooling"][name] = vectors
        print(file, name, [v["norm"] for v in vectors])
    reference["models"][file] = entry
    llama_cpp.llama_model_free(model)
(out / "embeddings.json").write_text(json.dumps(reference) + "\n")
