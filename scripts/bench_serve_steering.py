#!/usr/bin/env python3
"""What per-request steering costs `lumen serve`, in one run: eight streaming clients on a server
of four sequences (`-np 4`), all unsteered, then four of them steered by two different control
vectors (`control_vectors`, two clients each) and four not, against llama.cpp's llama-server
with eight unsteered clients on `-np 4`.

Usage: bench_serve_steering.py LUMEN LLAMA_SERVER MODEL VECTOR [--tokens 128] [--rounds 3]

VECTOR is a control vector for MODEL; the second is made by `lumen steering` from a prompt pair.
Each
client streams greedy completions of TOKENS tokens (EOS ignored where the server allows it) of its
own prompt; a round is every client finishing one request. Aggregate tokens/s is all tokens of a
round over its wall time; each figure is the median of ROUNDS rounds after one warm-up round. Both
servers get 2 threads; the three configurations alternate round by round, so a busy machine
shifts them alike."""
import argparse
import pathlib
import statistics
import subprocess
import tempfile

from bench_serve import free_port, round_throughput, wait_until_up

PROMPTS = ["Once upon a time, in a small village by the sea,", "The history of the printing press begins", "My favourite recipe for soup is",
           "In the year 2050, cities will", "The best way to learn a language is", "A short story about a robot:",
           "Dear diary, today I", "The mountain was covered in"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lumen")
    parser.add_argument("llama_server")
    parser.add_argument("model")
    parser.add_argument("vector")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    second = pathlib.Path(tempfile.mkdtemp()) / "second.gguf"
    subprocess.run([arguments.lumen, "steering", arguments.model, "--positive", "I love this", "--negative", "I hate this", "-o", str(second), "--no-log"],
                   check=True, capture_output=True)

    lumen_port, llama_port = free_port(), free_port()
    lumen = subprocess.Popen([arguments.lumen, "serve", arguments.model, "--port", str(lumen_port), "-np", "4", "-t", "2", "--ctx", "1024", "--no-log",
                              "--control-vector-file", f"a={arguments.vector}", "--control-vector-file", f"b={second}"],
                             stderr=subprocess.DEVNULL)
    llama = subprocess.Popen([arguments.llama_server, "-m", arguments.model, "--port", str(llama_port), "-t", "2", "-np", "4", "-c", "4096",
                              "--log-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lumen_url, llama_url = f"http://127.0.0.1:{lumen_port}/v1", f"http://127.0.0.1:{llama_port}/v1"
    plain = [{}] * 8
    steered = [{"control_vectors": {"a": 0.3}}, {"control_vectors": {"b": 0.1}}] * 2 + [{}] * 4
    configurations = [("lumen serve, 8 unsteered", lumen_url, plain), ("lumen serve, 4 steered (2 vectors) + 4 unsteered", lumen_url, steered),
                      ("llama-server, 8 unsteered", llama_url, [{"ignore_eos": True}] * 8)]
    try:
        wait_until_up(lumen_url, lumen)
        wait_until_up(llama_url, llama)
        results = {name: [] for name, *_ in configurations}
        for round_index in range(arguments.rounds + 1):
            for name, url, bodies in configurations:
                rate, _ = round_throughput(url, arguments.tokens, [(PROMPTS[index % len(PROMPTS)], body) for index, body in enumerate(bodies)])
                if round_index > 0:
                    results[name].append(rate)
    finally:
        for process in (lumen, llama):
            process.terminate()
            process.wait()
    medians = {name: statistics.median(rates) for name, rates in results.items()}
    plain_rate, steered_rate, llama_rate = (medians[name] for name, *_ in configurations)
    print("| eight streaming clients, -np 4 | aggregate tok/s |")
    print("|---|---:|")
    for name, rate in medians.items():
        print(f"| {name} | {rate:.1f} |")
    print(f"\nsteered / unsteered: {steered_rate / plain_rate:.2f}×; steered lumen serve / unsteered llama-server: {steered_rate / llama_rate:.2f}×")


if __name__ == "__main__":
    main()
