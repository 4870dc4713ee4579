#!/usr/bin/env python3
"""The tensor formats Lumen reads but does not write with llama.cpp's own rules, on the 110M
benchmark model (random weights, 768 wide, so every K-quant block fits): llama-quantize turns its
F32 file into Q5_1, Q2_K, Q3_K_M, IQ4_NL and IQ4_XS (once, under MODELS_DIR), then `lumen bench`
and `llama-bench` run on the same files in the same run (see engine_comparison.py).
Usage: bench_formats.py LUMEN LLAMA_BENCH LLAMA_QUANTIZE MODELS_DIR [ROUNDS]"""
import pathlib
import subprocess
import sys

from engine_comparison import print_table

lumen, llama_bench, llama_quantize, folder = sys.argv[1:5]
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
source = pathlib.Path(folder) / "bench-110M-f32.gguf"
models = {}
for kind in ("Q5_1", "Q2_K", "Q3_K_M", "IQ4_NL", "IQ4_XS"):
    path = pathlib.Path(folder) / f"bench-110M-{kind.lower()}.gguf"
    if not path.exists():
        subprocess.run([llama_quantize, str(source), str(path), kind, "2"], capture_output=True, check=True)
    models[f"110M {kind}"] = str(path)
print_table(lumen, llama_bench, models, rounds)
