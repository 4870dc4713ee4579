#!/usr/bin/env python3
"""What `GET /metrics` costs generation, in one run: `lumen serve` decoding 4 streams together
(-np 4) with nobody scraping, with a scrape every second (Prometheus' usual interval is 15 s; an
inference gateway's endpoint picker polls faster) and with one every 100 ms, the three alternating
(each round starting with the next) so a busy machine shifts them alike.

Usage: bench_metrics_scrape.py LUMEN MODEL [--tokens 256] [--rounds 15]

A round is 4 clients each streaming one greedy completion of TOKENS tokens; its figure is all
tokens over its wall time, and each condition's the median of ROUNDS rounds after a warm-up.
Before the rounds, SCRAPES scrapes one after another time what one costs, the round trip
included: the bound on the share of a core scraping every second can take."""
import argparse
import statistics
import subprocess
import threading
import time
import urllib.request

from bench_serve import free_port, round_throughput, wait_until_up

CLIENTS = 4
# Scrapes timed one after another on the idle server: what one costs, the client's side included.
SCRAPES = 500


class Scraper:
    """GETs /metrics every `interval` seconds on a thread until stopped; counts the scrapes."""

    def __init__(self, base, interval):
        self.base, self.interval, self.scrapes = base, interval, 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stopped.is_set():
            with urllib.request.urlopen(self.base + "/metrics", timeout=30) as response:
                assert b"vllm:num_requests_running" in response.read()
            self.scrapes += 1
            self.stopped.wait(self.interval)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stopped.set()
        self.thread.join()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lumen")
    parser.add_argument("model")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=15)
    arguments = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([arguments.lumen, "serve", arguments.model, "--port", str(port), "-np", str(CLIENTS), "-t", "2",
                               "--ctx", "1024", "--no-log"], stderr=subprocess.DEVNULL)
    conditions = [("no scraping", None), ("every 1 s", 1.0), ("every 100 ms", 0.1)]
    results = {name: [] for name, _ in conditions}
    scrapes = {name: 0 for name, _ in conditions}
    try:
        wait_until_up(base + "/v1", server)
        round_throughput(base + "/v1", CLIENTS, arguments.tokens, {})
        latencies = []
        for _ in range(SCRAPES):
            start = time.perf_counter()
            with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
                response.read()
            latencies.append(time.perf_counter() - start)
        for round_index in range(arguments.rounds):
            # Each round starts with the next condition, so none always runs first or last.
            for name, interval in conditions[round_index % 3:] + conditions[:round_index % 3]:
                if interval is None:
                    rate, _ = round_throughput(base + "/v1", CLIENTS, arguments.tokens, {})
                else:
                    with Scraper(base, interval) as scraper:
                        rate, _ = round_throughput(base + "/v1", CLIENTS, arguments.tokens, {})
                    scrapes[name] += scraper.scrapes
                results[name].append(rate)
    finally:
        server.terminate()
        server.wait()
    anchor = statistics.median(results["no scraping"])
    print(f"| scraping | tok/s ({CLIENTS} streams, median of {arguments.rounds}) | scrapes | ÷ no scraping |")
    print("|---|---:|---:|---:|")
    for name, _ in conditions:
        median = statistics.median(results[name])
        print(f"| {name} | {median:.1f} | {scrapes[name]} | {median / anchor:.3f} |")
    print(f"\none scrape of the idle server, round trip: median {statistics.median(latencies) * 1000:.2f} ms of {SCRAPES}")


if __name__ == "__main__":
    main()
