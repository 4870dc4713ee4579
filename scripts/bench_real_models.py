#!/usr/bin/env python3
"""The real models, Lumen against llama.cpp in the same run: `lumen bench` and `llama-bench` on the
same files, 2 threads, pp128 and tg64, alternating engines for ROUNDS rounds of 3 repetitions and
keeping each engine's best mean; then the memory a session of each model takes at its full
context (F32 KV cache, as the references use).
Usage: bench_real_models.py LUMEN LLAMA_BENCH MODEL_CACHE [ROUNDS]"""
import json
import pathlib
import subprocess
import sys

lumen, llama_bench, cache = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
models = {"SmolLM2-135M-Instruct Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}


def llama(path):
    out = subprocess.run([llama_bench, "-m", path, "-t", "2", "-p", "128", "-n", "64", "-r", "3", "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    return {("pp128" if row["n_prompt"] else "tg64"): row["avg_ts"] for row in json.loads(out)}


def ours(path):
    out = subprocess.run([lumen, "bench", path, "-t", "2", "-p", "128", "-n", "64", "-r", "3", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return {row["test"]: row["tokensPerSecondMean"] for row in json.loads(out)}


print("| model | test | llama.cpp t/s | Lumen t/s | Lumen ÷ llama.cpp |")
print("|---|---|---:|---:|---:|")
for name, file in models.items():
    path = str(pathlib.Path(cache) / file)
    best = {"llama": {}, "lumen": {}}
    for _ in range(rounds):
        for engine, run in (("llama", llama), ("lumen", ours)):
            for test, value in run(path).items():
                best[engine][test] = max(best[engine].get(test, 0), value)
    for test in ("pp128", "tg64"):
        theirs, mine = best["llama"][test], best["lumen"][test]
        print(f"| {name} | {test} | {theirs:.1f} | {mine:.1f} | {mine / theirs:.2f} |")

print("\nSession memory at the model's full context (F32 KV cache and buffers):\n")
for name, file in models.items():
    script = f'let m = load("{pathlib.Path(cache) / file}")\nprint(m.info["contextLength"], m.info["sessionBytes"])\n'
    out = subprocess.run([lumen, "repl"], input=script, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1].split()
    print(f"- {name}: {int(out[1]) / 2**20:.0f} MiB for {out[0]} tokens")
