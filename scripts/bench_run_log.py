#!/usr/bin/env python3
"""The run log's cost on generation speed: the same REPL script (GENERATIONS generations of
TOKENS tokens each, greedy, on MODEL) with the log on and with LUMEN_LOG=0, alternating, ROUNDS
times each, in one run. Each run's figure is its generations' mean tokens per second as Lumen
reports them (Generation.stats); prints the medians and the ratio (on ÷ off). The log-on runs
share one database, which a first, unmeasured run creates: the steady state, where the model
file's SHA-256 is already known (the first use of a file hashes it once, on the log's thread).
Usage: bench_run_log.py LUMEN MODEL [ROUNDS] [GENERATIONS] [TOKENS]"""
import os
import statistics
import subprocess
import sys
import tempfile

lumen, model = sys.argv[1], sys.argv[2]
rounds, generations, tokens = (int(value) for value in (sys.argv[3:] + ["5", "20", "64"][len(sys.argv) - 3:])[:3])
script = (f'let m = load("{model}")\nprewarm(m)\nvar speeds = []\n'
          f'for i in 0..<{generations} {{\n  let g = generate(m, "Once upon a time " + String(i), maxTokens: {tokens}, temperature: 0)\n'
          '  speeds.append(g.stats["tokensPerSecond"])\n}\nprint("speed", mean(speeds))\n')


scratch = tempfile.TemporaryDirectory()
database = os.path.join(scratch.name, "runs.sqlite")


def measure(log_on):
    environment = dict(os.environ, LUMEN_LOG_PATH=database)
    if not log_on:
        environment["LUMEN_LOG"] = "0"
    result = subprocess.run([lumen, "repl"], input=script, capture_output=True, text=True, check=True, env=environment)
    return float(next(line for line in result.stdout.splitlines() if line.startswith("speed")).split()[1])


measure(True)
figures = {True: [], False: []}
for round in range(rounds):
    for log_on in (round % 2 == 0, round % 2 != 0):
        figures[log_on].append(measure(log_on))
        print(f"round {round + 1} log {'on ' if log_on else 'off'}: {figures[log_on][-1]:.1f} tok/s", file=sys.stderr)
logged = subprocess.run([lumen, "log", "stats"], capture_output=True, text=True, check=True, env=dict(os.environ, LUMEN_LOG_PATH=database)).stdout
assert f"runs         {generations * (rounds + 1)}" in logged, logged
on, off = statistics.median(figures[True]), statistics.median(figures[False])
print(f"| {os.path.basename(model)} | {generations} × {tokens} tokens | {off:.1f} | {on:.1f} | {on / off:.3f} |")
