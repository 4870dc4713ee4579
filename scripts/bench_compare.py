#!/usr/bin/env python3
"""The bench set, Lumen against llama.cpp in the same run (see engine_comparison.py): pp128,
pp512 and tg64, then tg64 after 1024 tokens of context, 2 threads, both engines with an F16 KV
cache (llama-bench's default; Lumen's `--cache-type f16`). The random-weight 110M (and,
with --large, 1.1B) models come from make_bench_models.py; llama-quantize makes the K-quant and
other formats from them (once, under MODELS_DIR); the real models are read from the model cache.
Last, `lumen quantize` against llama-quantize from the F32 110M (and 1.1B) file.
With --only, only the models whose names contain one of the given strings (e.g. --only Q4_0) and
no quantizer table: to measure again the rows one change touches.
Usage: bench_compare.py LUMEN LLAMA_BENCH LLAMA_QUANTIZE MODELS_DIR MODEL_CACHE [--large] [--rounds N] [--only NAME...]"""
import argparse
import pathlib
import subprocess

import engine_comparison
import quantize_comparison

parser = argparse.ArgumentParser()
for name in ("lumen", "llama_bench", "llama_quantize", "models", "cache"):
    parser.add_argument(name)
parser.add_argument("--large", action="store_true")
parser.add_argument("--rounds", type=int, default=2)
parser.add_argument("--only", nargs="+")
options = parser.parse_args()
folder = pathlib.Path(options.models)


def made(size, kind, source):
    """The bench model of `size` in `kind`, quantized by llama-quantize from `source` if missing."""
    path = folder / f"bench-{size}-{kind.lower()}.gguf"
    if not path.exists():
        subprocess.run([options.llama_quantize, "--allow-requantize", str(folder / f"bench-{size}-{source}.gguf"), str(path), kind, "2"],
                       capture_output=True, check=True)
    return str(path)


models = {"15M F32": str(folder / "bench-15M-f32.gguf")}
models.update({f"110M {kind}": str(folder / f"bench-110M-{kind.lower()}.gguf") for kind in ("F32", "Q8_0", "Q4_0")})
models.update({f"110M {kind}": made("110M", kind, "f32") for kind in ("Q4_K_M", "Q6_K", "Q5_1", "Q2_K", "Q3_K_M", "IQ4_NL", "IQ4_XS")})
if options.large:
    models.update({f"1.1B {kind}": str(folder / f"bench-1.1B-{kind.lower()}.gguf") for kind in ("Q8_0", "Q4_0")})
    models["1.1B Q4_K_M"] = made("1.1B", "Q4_K_M", "f32")
cache = pathlib.Path(options.cache)
for name, file in {"SmolLM2-135M Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}.items():
    if (cache / file).exists():
        models[name] = str(cache / file)

if options.only:
    models = {name: path for name, path in models.items() if any(part in name for part in options.only)}
f16 = ("--cache-type", "f16")
engine_comparison.print_table(options.lumen, options.llama_bench, models, options.rounds, prompts=(128, 512), generations=(64,),
                              lumen_options=f16)
print()
engine_comparison.print_table(options.lumen, options.llama_bench, models, options.rounds, prompts=(0,), generations=(64,),
                              depths=(1024,), lumen_options=f16)
if options.only:
    raise SystemExit
print()
sources = {size: str(folder / f"bench-{size}-f32.gguf") for size in ("110M", "1.1B") if size == "110M" or options.large}
quantize_comparison.print_table(options.lumen, options.llama_quantize, sources, ("Q8_0", "Q4_0", "Q4_K_M"), options.rounds)
