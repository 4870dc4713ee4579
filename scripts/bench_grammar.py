#!/usr/bin/env python3
"""Constrained generation against plain generation and against llama.cpp's grammar sampler, in
the same run: for each model, `lumen generate` and llama-server's /completion (2 threads each,
prompt cache off) with and without llama.cpp's own grammars/json_arr.gbnf, greedy and sampled
(temperature 0.8 with llama.cpp's top-k 40, and with top-k 0: greedy and top-k draws check the
likeliest tokens one by one, top-k 0 masks the whole vocabulary every token, which the per-token
cost then is). Best generation tok/s of ROUNDS rounds; the per-token cost of the
grammar is 1/constrained - 1/plain.
Usage: bench_grammar.py LUMEN LLAMA_SERVER GRAMMAR_FILE MODEL... [--rounds N]"""
import argparse
import json
import re
import socket
import subprocess
import time
import urllib.request

PROMPT = "A JSON array of twenty fruits, each an object with its name, colour and price:\n"
TOKENS = 128


def lumen_speed(lumen, model, grammar, temperature, top_k):
    arguments = [lumen, "generate", model, PROMPT, "-n", str(TOKENS), "--temp", str(temperature), "--top-k", str(top_k), "--seed", "7", "-t", "2",
                 "--no-log"]
    if grammar:
        arguments += ["--grammar-file", grammar]
    result = subprocess.run(arguments, capture_output=True, text=True, check=True)
    count, speed = re.search(r"(\d+) generated at ([\d.]+) tok/s", result.stderr).groups()
    return float(speed), int(count)


def post(port, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser(description="Constrained against plain generation and llama.cpp's grammar sampler.")
    parser.add_argument("lumen")
    parser.add_argument("llama_server")
    parser.add_argument("grammar_file")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    lumen, llama_server, grammar_file, models, rounds = options.lumen, options.llama_server, options.grammar_file, options.models, options.rounds
    grammar = open(grammar_file).read()
    print("| model | sampling | lumen plain t/s | lumen grammar t/s | grammar ÷ plain | grammar cost ms/token | llama.cpp grammar t/s | lumen ÷ llama.cpp (grammar) | tokens |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for model in models:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen([llama_server, "-m", model, "--port", str(port), "-t", "2", "--ctx-size", "1024", "--parallel", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)
            for temperature, top_k, label in ((0, 40, "greedy"), (0.8, 40, "top-k 40"), (0.8, 0, "top-k 0 (whole mask)")):
                best = {"plain": 0.0, "grammar": 0.0, "llama": 0.0}
                counts = {}
                for _ in range(rounds):
                    speed, _ = lumen_speed(lumen, model, None, temperature, top_k)
                    best["plain"] = max(best["plain"], speed)
                    speed, counts["lumen"] = lumen_speed(lumen, model, grammar_file, temperature, top_k)
                    best["grammar"] = max(best["grammar"], speed)
                    answer = post(port, {"prompt": PROMPT, "n_predict": TOKENS, "temperature": temperature, "top_k": top_k, "seed": 7, "grammar": grammar,
                                         "cache_prompt": False})
                    best["llama"] = max(best["llama"], answer["timings"]["predicted_per_second"])
                    counts["llama"] = answer["timings"]["predicted_n"]
                cost = 1000 / best["grammar"] - 1000 / best["plain"]
                name = model.rsplit("/", 1)[-1]
                print(f"| {name} | {label} | {best['plain']:.1f} | {best['grammar']:.1f} | {best['grammar'] / best['plain']:.2f} | {cost:.2f} | "
                      f"{best['llama']:.1f} | {best['grammar'] / best['llama']:.2f} | {counts['lumen']} / {counts['llama']} |", flush=True)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
