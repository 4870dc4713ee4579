#!/usr/bin/env python3
"""Serving throughput in one run: `lumen serve` against llama.cpp's llama-server on the same model,
with 1, 2, 4 and 8 concurrent streaming clients, and the HTTP path's cost against in-process
generation (`lumen generate`).

Usage: bench_serve.py LUMEN LLAMA_SERVER MODEL [--tokens 128] [--rounds 3]

Each client streams greedy completions of TOKENS tokens (EOS ignored where the server allows it)
for a fixed prompt; a round is every client finishing one request. Aggregate tokens/s is all
tokens of a round over its wall time; the figure is the median of ROUNDS rounds, after one
warm-up round. Both servers get 2 threads and -np N for N clients: llama-server's parallel
slots, lumen serve's sequences of its one session, each decoded together in one batch. The
engines alternate rounds so a busy machine shifts both alike."""
import argparse
import json
import re
import socket
import statistics
import subprocess
import threading
import time
import urllib.request

PROMPT = "Once upon a time, in a small village by the sea,"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url, process, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited: {process.args}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server did not start: {process.args}")


def stream_tokens(url, tokens, extra, prompt=PROMPT):
    """Streams one completion of `prompt`; returns the number of content chunks received."""
    body = {"prompt": prompt, "max_tokens": tokens, "temperature": 0, "stream": True, **extra}
    request = urllib.request.Request(url + "/completions", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    count = 0
    with urllib.request.urlopen(request, timeout=600) as response:
        for line in response:
            if line.startswith(b"data: ") and line.strip() != b"data: [DONE]":
                chunk = json.loads(line[6:])
                if chunk.get("choices") and chunk["choices"][0].get("text"):
                    count += 1
    return count


def round_throughput(url, tokens, requests):
    """Every request of `requests` (a prompt and the body's extra fields) streamed at once by a
    client of its own: aggregate tokens/s and the tokens received."""
    counts = [0] * len(requests)
    def client(index):
        prompt, extra = requests[index]
        counts[index] = stream_tokens(url, tokens, extra, prompt=prompt)
    threads = [threading.Thread(target=client, args=(index,)) for index in range(len(requests))]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - start), sum(counts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lumen")
    parser.add_argument("llama_server")
    parser.add_argument("model")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()

    in_process = subprocess.run([arguments.lumen, "generate", arguments.model, PROMPT, "-n", str(arguments.tokens), "--temp", "0", "-t", "2", "--no-log"],
                                capture_output=True, text=True, check=True)
    local = float(re.findall(r"([\d.]+) tok/s", in_process.stderr)[-1])

    rows = []
    for clients in (1, 2, 4, 8):
        lumen_port, llama_port = free_port(), free_port()
        lumen = subprocess.Popen([arguments.lumen, "serve", arguments.model, "--port", str(lumen_port), "-np", str(clients), "-t", "2",
                                  "--ctx", "1024", "--no-log"], stderr=subprocess.DEVNULL)
        llama = subprocess.Popen([arguments.llama_server, "-m", arguments.model, "--port", str(llama_port), "-t", "2", "-np", str(clients),
                                  "-c", str(1024 * clients), "--log-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers = [("lumen serve", f"http://127.0.0.1:{lumen_port}/v1", lumen, {}),
                   ("llama-server", f"http://127.0.0.1:{llama_port}/v1", llama, {"ignore_eos": True})]
        try:
            for _, url, process, _ in servers:
                wait_until_up(url, process)
            results = {name: [] for name, *_ in servers}
            for round_index in range(arguments.rounds + 1):
                for name, url, _, extra in servers:
                    rate, _ = round_throughput(url, arguments.tokens, [(PROMPT, extra)] * clients)
                    if round_index > 0:
                        results[name].append(rate)
            ours, theirs = statistics.median(results["lumen serve"]), statistics.median(results["llama-server"])
            rows.append((clients, ours, theirs))
        finally:
            for _, _, process, _ in servers:
                process.terminate()
                process.wait()
    print("| clients (-np) | lumen serve tok/s | llama-server tok/s | ratio |")
    print("|---:|---:|---:|---:|")
    for clients, ours, theirs in rows:
        print(f"| {clients} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |")
    print(f"\nin-process `lumen generate`: {local:.1f} tok/s after the first token; one stream through `lumen serve`: "
          f"{rows[0][1]:.1f} tok/s including prompt and first token ({rows[0][1] / local:.2f}×)")


if __name__ == "__main__":
    main()
