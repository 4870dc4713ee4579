#!/usr/bin/env python3
"""Serving requests under different LoRA adapters at once, in one run: `lumen serve` and llama.cpp's
llama-server, both `-np 4` with the same adapters loaded at scale 0, each given four streamed
requests at once whose `lora` fields choose their adapters — every request a different set, or all
the same one.

Usage: bench_lora_serve.py LUMEN LLAMA_SERVER MODEL ADAPTER ADAPTER ADAPTER [--tokens 128] [--rounds 3]

Each figure is the aggregate generation rate of the four streams (content chunks received over the
round's wall time, prompts included), the median of ROUNDS rounds after a warm-up; the two servers
alternate round by round, so a busy machine shifts them alike. Lumen's batch decodes rows under
different adapters in one forward pass; llama-server batches slots only when their adapters are equal."""
import argparse
import statistics
import subprocess

from bench_serve import PROMPT, free_port, round_throughput, wait_until_up

CLIENTS = 4
# name: each request's lora field (ids of the three adapters given).
MIXES = {
    "four requests, each its own adapters": [[{"id": 0, "scale": 1}], [{"id": 1, "scale": 1}], [{"id": 2, "scale": 1}],
                                             [{"id": 0, "scale": 0.5}, {"id": 1, "scale": 0.5}]],
    "four requests, one adapter": [[{"id": 0, "scale": 1}]] * CLIENTS,
}


def main():
    parser = argparse.ArgumentParser()
    for name in ["lumen", "llama_server", "model"]:
        parser.add_argument(name)
    parser.add_argument("adapters", nargs=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    scaled = ",".join(f"{adapter}:0" for adapter in arguments.adapters)
    lumen_port, llama_port = free_port(), free_port()
    lumen = subprocess.Popen([arguments.lumen, "serve", arguments.model, "--port", str(lumen_port), "-np", str(CLIENTS), "-t", "2", "--ctx", "1024",
                              "--no-log", "--lora-scaled", scaled], stderr=subprocess.DEVNULL)
    llama = subprocess.Popen([arguments.llama_server, "-m", arguments.model, "--port", str(llama_port), "-t", "2", "-np", str(CLIENTS),
                              "-c", str(1024 * CLIENTS), "--log-disable", "--lora-scaled", scaled], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers = [("lumen serve", f"http://127.0.0.1:{lumen_port}/v1", lumen, {}),
               ("llama-server", f"http://127.0.0.1:{llama_port}/v1", llama, {"ignore_eos": True, "cache_prompt": False})]
    rows = []
    try:
        for _, url, process, _ in servers:
            wait_until_up(url, process)
        for mix, loras in MIXES.items():
            results = {name: [] for name, *_ in servers}
            for round_index in range(arguments.rounds + 1):
                for name, url, _, extra in servers:
                    rate, _ = round_throughput(url, arguments.tokens, [(PROMPT, {**extra, "lora": lora}) for lora in loras])
                    if round_index > 0:
                        results[name].append(rate)
            rows.append((mix, statistics.median(results["lumen serve"]), statistics.median(results["llama-server"])))
    finally:
        for _, _, process, _ in servers:
            process.terminate()
            process.wait()
    print("| requests (-np 4) | lumen serve tok/s | llama-server tok/s | ratio |")
    print("|---|---:|---:|---:|")
    for mix, ours, theirs in rows:
        print(f"| {mix} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
