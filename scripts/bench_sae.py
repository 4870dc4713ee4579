#!/usr/bin/env python3
"""SAE cost during generation: greedy generation of 128 tokens with a 16k-feature JumpReLU SAE
setting a feature at one block's residual stream at every token (`setFeature(s, feature: 0,
value: 0)`, which encodes that feature of every row — since `8b7865f` that feature alone, before
it every feature), against plain generation and against an intervention at the same point that
changes nothing (`intervene(…, scale: 1)`: what running with a hook costs without the SAE), in one
`lumen repl` process, rounds interleaved, the best generation speed of each (tokens per second,
so a text that ends sooner does not count).

The SAE is random (Gemma Scope's format, F32, thresholds high enough that few features fire), made
in a temporary folder: 16,384 features over the model's width.
Usage: bench_sae.py LUMEN_BINARY MODELS_DIR [ROUNDS]"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import save_file

binary, models = sys.argv[1], pathlib.Path(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
MODELS = [("SmolLM2-135M-Instruct.Q4_1.gguf", 576, 12), ("gemma-3-270m-q4_k_m.gguf", 640, 9)]
FEATURES = 16384


def write_sae(folder, width, seed=0):
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    save_file({"w_enc": (rng.standard_normal((width, FEATURES), dtype=np.float32) / np.sqrt(width)).astype(np.float32),
               "b_enc": np.zeros(FEATURES, dtype=np.float32),
               "w_dec": (rng.standard_normal((FEATURES, width), dtype=np.float32) / np.sqrt(width)).astype(np.float32),
               "b_dec": np.zeros(width, dtype=np.float32),
               "threshold": np.full(FEATURES, 3.0, dtype=np.float32)}, str(folder / "params.safetensors"))


with tempfile.TemporaryDirectory() as scratch:
    for name, width, block in MODELS:
        folder = pathlib.Path(scratch) / name / "resid_post" / f"layer_{block}_width_16k_random"
        write_sae(folder, width)
        script = f'''let m = load("{models / name}")
let s = loadSAE("{folder}")
let prompt = "Once upon a time, in a small village by the sea, there lived"
var plain = []
var hooked = []
var encoded = []
for round in range({rounds}) {{
    plain = plain + [m.generate(prompt, maxTokens: 128, temperature: 0).stats["tokensPerSecond"]]
    hooked = hooked + [m.generate(prompt, maxTokens: 128, temperature: 0, interventions: [intervene(block: {block}, point: "resid_post", scale: 1)]).stats["tokensPerSecond"]]
    encoded = encoded + [m.generate(prompt, maxTokens: 128, temperature: 0, interventions: [setFeature(s, feature: 0, value: 0)]).stats["tokensPerSecond"]]
}}
print(json(["plain": max(plain), "hooked": max(hooked), "encoded": max(encoded)]))
'''
        out = subprocess.run([binary, "repl", "--no-log"], input=script, capture_output=True, text=True, check=True).stdout
        result = json.loads(out[out.rindex("{"):])
        print(f"{name}: plain {result['plain']:.1f} tok/s, a hook that changes nothing {result['hooked']:.1f} tok/s, "
              f"setFeature of a 16k-feature SAE at block {block} at every token {result['encoded']:.1f} tok/s: "
              f"{result['plain'] / result['encoded']:.2f}× plain's time per token ({result['hooked'] / result['encoded']:.2f}× the hook's)")
