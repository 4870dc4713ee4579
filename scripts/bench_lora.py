#!/usr/bin/env python3
"""What a LoRA adapter costs generation, in one run: `lumen generate` greedy without an adapter
and with ADAPTER (`--lora`), against llama.cpp's llama-server with the same adapter (`--lora`;
llama-bench takes no adapter, so its server's own timing, `timings.predicted_per_second`).

Usage: bench_lora.py LUMEN LLAMA_SERVER MODEL ADAPTER [--tokens 128] [--rounds 5]

Each figure is generation tokens/s, after a short prompt, end of generation ignored — Lumen's as
its summary line reports it (the tokens after the first over the time since it), llama-server's
as its timings report it; both on 2 threads. The configurations alternate round by round, so a busy
machine shifts them alike; each figure is the median of ROUNDS rounds after one warm-up round."""
import argparse
import json
import re
import statistics
import subprocess
import urllib.request

from bench_serve import free_port, wait_until_up

PROMPT = "Once upon a time, there was a little robot who"


def lumen_rate(lumen, model, tokens, flags):
    """`lumen generate`'s generation tokens/s for one greedy run with `flags`."""
    done = subprocess.run([lumen, "generate", model, PROMPT, "-n", str(tokens), "--temp", "0", "--ignore-eos", "-t", "2", "--no-log", *flags],
                          capture_output=True, text=True, check=True)
    return float(re.search(r"(\d+) generated at ([\d.]+) tok/s", done.stderr + done.stdout).group(2))


def llama_rate(url, tokens):
    """llama-server's generation tokens/s for one greedy completion."""
    request = urllib.request.Request(url + "/completion", data=json.dumps({"prompt": PROMPT, "n_predict": tokens, "temperature": 0,
                                                                            "ignore_eos": True, "cache_prompt": False}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)["timings"]["predicted_per_second"]


def main():
    parser = argparse.ArgumentParser()
    for name in ["lumen", "llama_server", "model", "adapter"]:
        parser.add_argument(name)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    port = free_port()
    llama = subprocess.Popen([arguments.llama_server, "-m", arguments.model, "--port", str(port), "-t", "2", "-c", "1024", "--lora", arguments.adapter,
                              "--log-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    configurations = [("lumen generate", lambda: lumen_rate(arguments.lumen, arguments.model, arguments.tokens, [])),
                      ("lumen generate --lora", lambda: lumen_rate(arguments.lumen, arguments.model, arguments.tokens, ["--lora", arguments.adapter])),
                      ("llama-server --lora", lambda: llama_rate(url, arguments.tokens))]
    try:
        wait_until_up(url + "/v1", llama)
        results = {name: [] for name, _ in configurations}
        for round_index in range(arguments.rounds + 1):
            for name, measure in configurations:
                rate = measure()
                if round_index > 0:
                    results[name].append(rate)
    finally:
        llama.terminate()
        llama.wait()
    medians = {name: statistics.median(rates) for name, rates in results.items()}
    for name, rates in results.items():
        print(f"| {name} | {medians[name]:.1f} | {' '.join(f'{rate:.1f}' for rate in rates)} |")
    # Each round's ratio, of runs moments apart: this machine's speed drifts between rounds by more
    # than an adapter costs, so the median of the rounds' ratios, not the ratio of the medians.
    costs = [plain / adapted for plain, adapted in zip(results["lumen generate"], results["lumen generate --lora"])]
    against = [adapted / server for adapted, server in zip(results["lumen generate --lora"], results["llama-server --lora"])]
    print(f"adapter cost: {statistics.median(costs):.3f}× plain (bound 1.15×; rounds {' '.join(f'{cost:.2f}' for cost in costs)}); "
          f"against llama-server --lora: {statistics.median(against):.2f}×")


if __name__ == "__main__":
    main()
