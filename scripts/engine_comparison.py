"""Lumen against llama.cpp in the same run: `lumen bench` and `llama-bench` on the same files,
2 threads, pp128 and tg64, alternating engines for a number of rounds of 3 repetitions and keeping
each engine's best mean. Imported by bench_real_models.py and bench_formats.py."""
import json
import subprocess


def llama(llama_bench, path):
    out = subprocess.run([llama_bench, "-m", path, "-t", "2", "-p", "128", "-n", "64", "-r", "3", "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    return {("pp128" if row["n_prompt"] else "tg64"): row["avg_ts"] for row in json.loads(out)}


def lumen(binary, path):
    out = subprocess.run([binary, "bench", path, "-t", "2", "-p", "128", "-n", "64", "-r", "3", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return {row["test"]: row["tokensPerSecondMean"] for row in json.loads(out)}


def print_table(lumen_binary, llama_bench, models, rounds):
    """Prints a Markdown table row per model (name → path) and test."""
    print("| model | test | llama.cpp t/s | Lumen t/s | Lumen ÷ llama.cpp |")
    print("|---|---|---:|---:|---:|")
    for name, path in models.items():
        best = {"llama": {}, "lumen": {}}
        for _ in range(rounds):
            for engine, run in (("llama", lambda p: llama(llama_bench, p)), ("lumen", lambda p: lumen(lumen_binary, p))):
                for test, value in run(path).items():
                    best[engine][test] = max(best[engine].get(test, 0), value)
        for test in ("pp128", "tg64"):
            theirs, mine = best["llama"][test], best["lumen"][test]
            print(f"| {name} | {test} | {theirs:.1f} | {mine:.1f} | {mine / theirs:.2f} |", flush=True)
