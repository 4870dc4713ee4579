#!/usr/bin/env python3
"""The KV cache's types at depth, Lumen against llama.cpp in the same run: `lumen bench -ctk T -ctv
T` and `llama-bench -ctk T -ctv T -fa 1` (flash attention, which llama.cpp needs for a quantized V
cache) on the real models, 2 threads, pp512 and tg64 at depths 0 and 4096, alternating engines for
ROUNDS rounds of 2 repetitions and keeping each engine's best mean (engine_comparison.py).
Usage: bench_cache_types.py LUMEN LLAMA_BENCH MODEL_CACHE [ROUNDS]"""
import pathlib
import sys

from engine_comparison import print_table

lumen, llama_bench, cache = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
models = {"SmolLM2-135M-Instruct Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}
for index, cache_type in enumerate(("f16", "q8_0")):
    flags = ("-ctk", cache_type, "-ctv", cache_type)
    print(f"\n{cache_type.upper()} cache:\n")
    print_table(lumen, llama_bench, {name: str(pathlib.Path(cache) / file) for name, file in models.items()}, rounds,
                prompts=(512,), generations=(64,), depths=(0, 4096), lumen_options=flags, llama_options=(*flags, "-fa", "1"), repetitions=2)
