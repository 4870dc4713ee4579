#!/usr/bin/env python3
"""Continuing from a saved prompt state against reading the prompt again: `lumen generate MODEL
PROMPT -n 1 --temp 0` (a prompt of about 1,024 tokens), wall-clock from start to exit, with
`--prompt-cache FILE --prompt-cache-ro` (the state saved once before) and without, in the same
run, best of ROUNDS each; the run log on (it remembers the model's SHA-256, which binds a state).
Usage: bench_prompt_cache.py LUMEN MODEL... [--rounds N]"""
import argparse
import os
import subprocess
import tempfile
import time

PROMPT = "The history of the city begins in the bronze age, when traders settled by the river. " * 57


def seconds(arguments):
    start = time.perf_counter()
    result = subprocess.run(arguments, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, result.stderr.strip().splitlines()[-1]


def main():
    parser = argparse.ArgumentParser(description="Continuing from a saved prompt state against reading the prompt again.")
    parser.add_argument("lumen")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    lumen, models, rounds = options.lumen, options.models, options.rounds
    print("| model | prompt tokens | reused | state size | read again s | from state s | state ÷ again |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as directory:
        os.environ["LUMEN_LOG_PATH"] = os.path.join(directory, "runs.sqlite")
        for model in models:
            state = os.path.join(directory, os.path.basename(model) + ".state")
            base = [lumen, "generate", model, PROMPT, "-n", "1", "--temp", "0", "-t", "2", "--ctx", "2048"]
            subprocess.run(base + ["--prompt-cache", state], capture_output=True, check=True)
            again, cached = float("inf"), float("inf")
            for _ in range(rounds):
                again = min(again, seconds(base)[0])
                elapsed, summary = seconds(base + ["--prompt-cache", state, "--prompt-cache-ro"])
                cached = min(cached, elapsed)
            count = summary.split(" prompt tokens")[0].lstrip("[")
            reused = summary.split("(")[1].split(" reused")[0] if "reused" in summary else "0"
            size = os.path.getsize(state) / 2**20
            print(f"| {os.path.basename(model)} | {count} | {reused} | {size:.1f} MiB | {again:.2f} | {cached:.2f} | {cached / again:.2f} |", flush=True)


if __name__ == "__main__":
    main()
