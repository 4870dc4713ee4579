#!/usr/bin/env python3
"""Capture cost: prefill of a 512-token prompt keeping the residual stream of every block
(`trace(m, prompt)` in a cell) against the same prefill keeping nothing (`trace(m, prompt,
blocks: [])`: the same call, no block kept), in one `lumen repl` process, rounds interleaved,
best of each.
Usage: bench_capture.py LUMEN_BINARY MODELS_DIR [ROUNDS]"""
import json
import pathlib
import subprocess
import sys

binary, models = sys.argv[1], pathlib.Path(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]

WORDS = "the cat sat on a mat and looked at the birds in the garden".split()


def prompt_of(model, tokens):
    """The longest text of repeated words that is at most `tokens` tokens for `model`."""
    def count(words):
        text = " ".join(WORDS[i % len(WORDS)] for i in range(words))
        ids = json.loads(subprocess.run([binary, "tokenize", str(model), text, "--json", "--no-log"], capture_output=True, text=True, check=True).stdout)
        return text, len(ids)
    low, high = 1, tokens
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if count(middle)[1] <= tokens else (low, middle - 1)
    return count(low)


for name in MODELS:
    prompt, n = prompt_of(models / name, 512)
    script = f'''let m = load("{models / name}", contextLength: 1024)
let prompt = {json.dumps(prompt)}
let n = {n}
var plain = []
var traced = []
for round in range({rounds}) {{
    let a = now()
    let p = trace(m, prompt, blocks: [])
    plain = plain + [now() - a]
    let b = now()
    let t = trace(m, prompt)
    traced = traced + [now() - b]
}}
print(json(["tokens": n, "plain": min(plain), "traced": min(traced)]))
'''
    out = subprocess.run([binary, "repl", "--no-log"], input=script, capture_output=True, text=True, check=True).stdout
    result = json.loads(out[out.index("{"):])
    print(f"{name}: {result['tokens']} tokens, plain prefill {result['plain'] * 1000:.0f} ms, "
          f"keeping the residual stream of every block {result['traced'] * 1000:.0f} ms: {result['traced'] / result['plain']:.2f}×")
