#!/usr/bin/env python3
"""The newer architectures' shapes, Lumen against llama.cpp in the same run (engine_comparison:
`lumen bench` and `llama-bench`, 2 threads, alternating engines, best mean of 3 repetitions over
ROUNDS rounds): the Qwen3.5-0.8B-shaped hybrid and the scaled-down Qwen3-30B-A3B-shaped mixture of
experts of scripts/make_arch_bench_models.py, quantized to Q4_K_M by `lumen quantize` (one file
for both engines), and its gpt-oss-20b-shaped mixture of experts in MXFP4_MOE, at pp128, pp512,
tg64 and tg64 after 1024 tokens of context.
Usage: bench_architectures.py LUMEN LLAMA_BENCH BENCH_MODELS_DIR [ROUNDS]"""
import pathlib
import sys

from engine_comparison import print_table

lumen, llama_bench, folder = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
models = {"Qwen3.5-0.8B shape (qwen35) Q4_K_M": "qwen35-0.8b-shape-q4_k_m.gguf",
          "Qwen3-30B-A3B shape, 8 layers of 32 experts (qwen3moe) Q4_K_M": "qwen3moe-a3b-shape-q4_k_m.gguf",
          "gpt-oss-20b shape (gpt-oss) MXFP4_MOE": "gpt-oss-20b-shape-mxfp4.gguf"}
print_table(lumen, llama_bench, {name: str(pathlib.Path(folder) / file) for name, file in models.items()}, rounds,
            prompts=(128, 512), generations=(64,), depths=(0, 1024))
