#!/usr/bin/env python3
"""Makes llama.cpp's perplexity and KL-divergence references for `lumen perplexity` and `lumen kld`
with an installed llama-perplexity (built from the llama.cpp that PyPI's llama-cpp-python source
package vendors): for each case it runs llama-perplexity on Tests/reference/perplexity/story.txt
(-c CONTEXT -b CONTEXT -t 2) and records the running perplexity after each window and the final
estimate; for each pair, the --kl-divergence statistics of OTHER against BASE (the base's
log-probabilities go through a temporary file, as llama-perplexity needs). Model paths are
recorded relative to SHARED (../shared) or the model cache. Writes OUT
(Tests/reference/perplexity/llama-perplexity.json).
Usage: make_perplexity_references.py LLAMA_PERPLEXITY SHARED MODEL_CACHE OUT"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

binary, shared, cache, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
text = pathlib.Path(__file__).resolve().parent.parent / "Tests/reference/perplexity/story.txt"
PERPLEXITY = [("shared", "models/stories260K.gguf", 128), ("cache", "SmolLM2-135M-Instruct.Q4_1.gguf", 256),
              ("cache", "gemma-3-270m-q4_k_m.gguf", 256), ("shared", "models/quant-test-f32.gguf", 256)]
DIVERGENCE = [("models/quant-test-f32.gguf", "models/quant-test-q8_0.gguf", 256),
              ("models/quant-test-f32.gguf", "models/quant-test-q4_k_m.gguf", 256)]
NUMBER = r"(-?[0-9.]+)"


def run(model, context, *extra):
    result = subprocess.run([binary, "-m", str(model), "-f", str(text), "-c", str(context), "-b", str(context), "-t", "2", *extra],
                            capture_output=True, text=True, check=True)
    return result.stdout + result.stderr


def root(kind):
    return shared if kind == "shared" else cache


references = {"text": "story.txt", "perplexity": [], "divergence": []}
for kind, name, context in PERPLEXITY:
    log = run(root(kind) / name, context)
    final = re.search(r"Final estimate: PPL = " + NUMBER + r" \+/- " + NUMBER, log)
    windows = [float(value) for value in re.findall(r"\[\d+\]" + NUMBER + ",", log)]
    references["perplexity"].append({"root": kind, "model": name, "context": context, "windows": windows,
                                     "ppl": float(final.group(1)), "uncertainty": float(final.group(2))})
with tempfile.TemporaryDirectory() as scratch:
    for base, other, context in DIVERGENCE:
        logits = pathlib.Path(scratch) / "base.kld"
        run(shared / base, context, "--kl-divergence-base", str(logits))
        log = run(shared / other, context, "--kl-divergence-base", str(logits), "--kl-divergence")
        figures = {key: float(re.search(pattern + r"\s*:?\s*" + NUMBER, log).group(1)) for key, pattern in {
            "mean_kld": r"Mean    KLD", "max_kld": r"Maximum KLD", "p99_kld": r"99\.0%   KLD", "median_kld": r"Median  KLD",
            "mean_ppl_q": r"Mean PPL\(Q\)  ", "same_top_percent": r"Same top p:", "rms_dp_percent": r"RMS Δp    :"}.items()}
        references["divergence"].append({"base": base, "other": other, "context": context, **figures})
out.write_text(json.dumps(references, indent=1) + "\n")
