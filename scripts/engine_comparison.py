"""Lumen against llama.cpp in the same run: `lumen bench` and `llama-bench` on the same files,
2 threads, alternating engines for a number of rounds of 3 repetitions (or as many as asked) and keeping each engine's
best mean per test. Both print llama-bench's JSON fields (n_prompt, n_gen, n_depth, avg_ts), so
rows pair up by test. Imported by bench_compare.py, bench_real_models.py and bench_formats.py."""
import json
import subprocess


def arguments(prompts, generations, depths, repetitions=3):
    return ["-t", "2", "-p", ",".join(map(str, prompts)), "-n", ",".join(map(str, generations)),
            "-d", ",".join(map(str, depths)), "-r", str(repetitions), "-o", "json"]


def speeds(command):
    """avg_ts of each test, keyed by (n_prompt, n_gen, n_depth)."""
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return {(row["n_prompt"], row["n_gen"], row.get("n_depth", 0)): row["avg_ts"] for row in json.loads(out)}


def test_name(prompt, generated, depth):
    return (f"pp{prompt}" if prompt else f"tg{generated}") + (f" @ d{depth}" if depth else "")


def print_table(lumen_binary, llama_bench, models, rounds, prompts=(128,), generations=(64,), depths=(0,), lumen_options=(),
                repetitions=3, header=True, llama_options=()):
    """Prints a Markdown table row per model (name → path) and test, under its header unless
    `header` is false; `lumen_options` are added to Lumen's command line (e.g. its KV cache type),
    `llama_options` to llama-bench's."""
    if header:
        print("| model | test | llama.cpp t/s | Lumen t/s | Lumen ÷ llama.cpp |")
        print("|---|---|---:|---:|---:|")
    options = arguments(prompts, generations, depths, repetitions)
    engines = {"llama": [llama_bench, *llama_options, "-m"], "lumen": [lumen_binary, "bench", *lumen_options]}
    for name, path in models.items():
        best = {"llama": {}, "lumen": {}}
        for _ in range(rounds):
            for engine, command in engines.items():
                for test, value in speeds(command + [path] + options).items():
                    best[engine][test] = max(best[engine].get(test, 0), value)
        for test in sorted(best["llama"], key=lambda key: (key[2], key[0] == 0, key[0] or key[1])):
            theirs, mine = best["llama"][test], best["lumen"][test]
            print(f"| {name} | {test_name(*test)} | {theirs:.1f} | {mine:.1f} | {mine / theirs:.2f} |", flush=True)
