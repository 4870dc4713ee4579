#!/usr/bin/env python3
"""The real models, Lumen against llama.cpp in the same run: `lumen bench` and `llama-bench` on the
same files, 2 threads, pp128 and tg64, alternating engines for ROUNDS rounds of 3 repetitions and
keeping each engine's best mean; then the memory a session of each model takes at its full
context (F32 KV cache, as the references use).
Usage: bench_real_models.py LUMEN LLAMA_BENCH MODEL_CACHE [ROUNDS]"""
import pathlib
import subprocess
import sys

from engine_comparison import print_table

lumen, llama_bench, cache = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
models = {"SmolLM2-135M-Instruct Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}

print_table(lumen, llama_bench, {name: str(pathlib.Path(cache) / file) for name, file in models.items()}, rounds)

print("\nSession memory at the model's full context (F32 KV cache and buffers):\n")
for name, file in models.items():
    script = f'let m = load("{pathlib.Path(cache) / file}")\nprint(m.info["contextLength"], m.info["sessionBytes"])\n'
    out = subprocess.run([lumen, "repl"], input=script, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1].split()
    print(f"- {name}: {int(out[1]) / 2**20:.0f} MiB for {out[0]} tokens")
