#!/usr/bin/env python3
"""Sequences decoding together, in one run: `lumen bench --parallel` against llama.cpp's
llama-batched-bench on the bench set, alternating engines for ROUNDS rounds and keeping each
engine's best figure per row.

Usage: bench_parallel.py LUMEN LLAMA_BATCHED_BENCH MODEL... [--npl 1,2,4,8] [--npp 128] [--ntg 64] [--rounds 2] [--before LUMEN]

Each row is B sequences each reading an NPP-token prompt, then generating NTG tokens together,
2 threads: S_TG is the aggregate generation speed (B × NTG tokens over the generation time), in
llama-batched-bench's fields. With --before, an earlier build of Lumen runs in every round too,
and the table adds its S_TG and the after ÷ before ratio."""
import argparse
import json
import pathlib
import subprocess


def lumen_rows(lumen, model, npl, npp, ntg):
    out = subprocess.run([lumen, "bench", model, "--parallel", npl, "-p", str(npp), "-n", str(ntg), "-t", "2", "-r", "2", "-o", "jsonl"],
                         capture_output=True, text=True, check=True).stdout
    return {row["pl"]: row for row in map(json.loads, out.splitlines())}


def llama_rows(binary, model, npl, npp, ntg):
    count = max(int(n) for n in npl.split(","))
    out = subprocess.run([binary, "-m", model, "-npp", str(npp), "-ntg", str(ntg), "-npl", npl, "-t", "2", "-c", str(count * (npp + ntg)),
                          "--output-format", "jsonl"], capture_output=True, text=True, check=True).stdout
    return {row["pl"]: row for row in map(json.loads, (line for line in out.splitlines() if line.startswith("{")))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("lumen")
    parser.add_argument("llama_batched_bench")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--npl", default="1,2,4,8")
    parser.add_argument("--npp", type=int, default=128)
    parser.add_argument("--ntg", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", help="an earlier build of lumen, measured in the same rounds")
    arguments = parser.parse_args()
    engines = [("lumen", lumen_rows, arguments.lumen), ("llama", llama_rows, arguments.llama_batched_bench)]
    if arguments.before:
        engines.insert(0, ("before", lumen_rows, arguments.before))
    before_columns = (" before S_TG t/s | after ÷ before |", "---:|---:|") if arguments.before else ("", "")
    print(f"| model | B |{before_columns[0]} lumen S_TG t/s | llama.cpp S_TG t/s | ratio | lumen S_PP t/s | llama.cpp S_PP t/s | ratio |")
    print(f"|---|---:|{before_columns[1]}---:|---:|---:|---:|---:|---:|")
    for model in arguments.models:
        best = {engine: {} for engine, _, _ in engines}
        for _ in range(arguments.rounds):
            for engine, measure, binary in engines:
                for count, row in measure(binary, model, arguments.npl, arguments.npp, arguments.ntg).items():
                    kept = best[engine].setdefault(count, {"speed_tg": 0, "speed_pp": 0})
                    kept["speed_tg"] = max(kept["speed_tg"], row["speed_tg"])
                    kept["speed_pp"] = max(kept["speed_pp"], row["speed_pp"])
        name = pathlib.Path(model).stem
        for count in sorted(best["lumen"]):
            ours, theirs = best["lumen"][count], best["llama"][count]
            earlier = (f" {best['before'][count]['speed_tg']:.1f} | {ours['speed_tg'] / best['before'][count]['speed_tg']:.2f} |"
                       if arguments.before else "")
            print(f"| {name} | {count} |{earlier} {ours['speed_tg']:.1f} | {theirs['speed_tg']:.1f} | {ours['speed_tg'] / theirs['speed_tg']:.2f} "
                  f"| {ours['speed_pp']:.1f} | {theirs['speed_pp']:.1f} | {ours['speed_pp'] / theirs['speed_pp']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
