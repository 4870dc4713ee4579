#!/usr/bin/env python3
"""Tokenizer speed, Lumen against llama.cpp's llama-tokenize in the same run: both tokenize the
same ~1 MB of mixed text (scripts/tokenizer_corpus.py) with every vocabulary, alternating, best
of N; each also runs once on an empty input so the table can separate loading the vocabulary from
tokenizing. The ids of the two must be identical.
Usage: bench_tokenizer.py LUMEN LLAMA_TOKENIZE SHARED_DIR MODEL_CACHE [RUNS]"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

lumen, llama_tokenize, shared, cache = sys.argv[1:5]
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 3
shared, cache = pathlib.Path(shared), pathlib.Path(cache)
vocabularies = {
    "llama-bpe (Llama 3)": shared / "models/vocab/ggml-vocab-llama-bpe.gguf",
    "qwen2": shared / "models/vocab/ggml-vocab-qwen2.gguf",
    "gpt-2": shared / "models/vocab/ggml-vocab-gpt-2.gguf",
    "deepseek-llm": shared / "models/vocab/ggml-vocab-deepseek-llm.gguf",
    "phi-3 (SPM)": shared / "models/vocab/ggml-vocab-phi-3.gguf",
    "SmolLM2 (smollm)": cache / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "Gemma 3 (SPM, 262k)": cache / "gemma-3-270m-q4_k_m.gguf",
}
work = pathlib.Path(tempfile.mkdtemp())
corpus, empty = work / "corpus.txt", work / "empty.txt"
subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("tokenizer_corpus.py")), str(shared), str(corpus)], check=True)
empty.write_text("")


def lumen_command(model, text):
    return [lumen, "tokenize", str(model), "-", "--json"], text


def llama_command(model, text):
    return [llama_tokenize, "-m", str(model), "-f", str(text), "--ids", "--log-disable", "--no-escape"], None


def timed(command, stdin):
    started = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        result = subprocess.run(command, stdin=source, capture_output=True, check=True)
    return time.perf_counter() - started, json.loads(result.stdout.decode().strip().splitlines()[-1] or "[]")


print(f"corpus: {corpus.stat().st_size} bytes; best of {runs}; seconds (load only / total)\n")
print("| vocabulary | tokens | llama-tokenize | Lumen | Lumen / llama.cpp (tokenizing, total − load) |")
print("|---|---|---|---|---|")
for name, model in vocabularies.items():
    best = {}
    ids = {}
    for engine, make in (("llama", llama_command), ("lumen", lumen_command)):
        best[engine] = [float("inf"), float("inf")]
    for _ in range(runs):
        for engine, make in (("llama", llama_command), ("lumen", lumen_command)):
            for slot, text in ((0, empty), (1, corpus)):
                command, stdin = make(model, text)
                seconds, result = timed(command, stdin if engine == "lumen" else None)
                best[engine][slot] = min(best[engine][slot], seconds)
                if slot == 1:
                    ids[engine] = result
    assert ids["llama"] == ids["lumen"], f"{name}: the ids differ"
    llama_work = best["llama"][1] - best["llama"][0]
    lumen_work = best["lumen"][1] - best["lumen"][0]
    print(f"| {name} | {len(ids['lumen'])} | {best['llama'][0]:.2f} / {best['llama'][1]:.2f} | "
          f"{best['lumen'][0]:.2f} / {best['lumen'][1]:.2f} | {lumen_work / llama_work:.2f}× the time |")
