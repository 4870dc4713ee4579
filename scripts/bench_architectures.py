#!/usr/bin/env python3
"""The newer architectures' shapes, Lumen against llama.cpp in the same run (engine_comparison:
`lumen bench` and `llama-bench`, 2 threads, alternating engines, best mean of 3 repetitions over
ROUNDS rounds): the Qwen3.5-0.8B-shaped hybrid, the scaled-down Qwen3-30B-A3B-shaped mixture of
experts and the LFM2-1.2B-shaped hybrid of scripts/make_arch_bench_models.py, quantized to Q4_K_M by `lumen quantize` (one file
for both engines), and its gpt-oss-20b-shaped mixture of experts in MXFP4_MOE (one round of one
repetition: a round of its 24 layers takes each engine tens of minutes), at pp128, pp512, tg64 and
each after 1024 tokens of context.
Usage: bench_architectures.py LUMEN LLAMA_BENCH BENCH_MODELS_DIR [ROUNDS]"""
import pathlib
import sys

from engine_comparison import print_table

lumen, llama_bench, folder = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
models = {"Qwen3.5-0.8B shape (qwen35) Q4_K_M": "qwen35-0.8b-shape-q4_k_m.gguf",
          "Qwen3-30B-A3B shape, 8 layers of 32 experts (qwen3moe) Q4_K_M": "qwen3moe-a3b-shape-q4_k_m.gguf",
          "LFM2-1.2B shape (lfm2) Q4_K_M": "lfm2-1.2b-shape-q4_k_m.gguf"}
tests = dict(prompts=(128, 512), generations=(64,), depths=(0, 1024))
print_table(lumen, llama_bench, {name: str(pathlib.Path(folder) / file) for name, file in models.items()}, rounds, **tests)
print_table(lumen, llama_bench, {"gpt-oss-20b shape (gpt-oss) MXFP4_MOE": str(pathlib.Path(folder) / "gpt-oss-20b-shape-mxfp4.gguf")},
            1, repetitions=1, header=False, **tests)
