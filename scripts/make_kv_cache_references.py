#!/usr/bin/env python3
"""Makes llama.cpp references for quantized KV caches on the real models: greedy and teacher-forced
as RealModelTests reads them (llama_reference.greedy_reference), with llama.cpp's keys and values
in a Q8_0 cache (`-ctk q8_0 -ctv q8_0`, flash attention on, as llama.cpp needs for a quantized V),
the other settings those of ../shared/reference/README.md. Writes <case>.json and <case>.logits.bin
(the logits after the prompt and after the first greedy token) into OUT_DIR.
Usage: make_kv_cache_references.py MODEL_CACHE OUT_DIR"""
import json
import pathlib
import sys

import llama_cpp

from llama_reference import greedy_reference

cache, out = (pathlib.Path(argument) for argument in sys.argv[1:3])
out.mkdir(parents=True, exist_ok=True)
CASES = {
    "smollm2-q8_0": (cache / "SmolLM2-135M-Instruct.Q4_1.gguf", "Once upon a time, there was a little robot who"),
    "gemma3-q8_0": (cache / "gemma-3-270m-q4_k_m.gguf", "Question: Why is the sky blue?\nAnswer:"),
}
for name, (model, prompt) in CASES.items():
    reference, logits = greedy_reference(model, prompt, 32, f"{name}.logits.bin", cache_type=llama_cpp.GGML_TYPE_Q8_0)
    reference["cache_type"] = "q8_0"
    (out / f"{name}.json").write_text(json.dumps(reference, indent=1) + "\n")
    (out / f"{name}.logits.bin").write_bytes(logits)
    print(name, reference["cases"][0]["greedy_ids"][:8])
