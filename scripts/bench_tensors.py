#!/usr/bin/env python3
"""Tensor operations in Lumen against NumPy on this machine, same run: the issue's rows (softmax
over 262,144 logits, logSoftmax over [512][49152], sum and mean along each axis of
[30][512][576], matmul [512][576]·[576][49152], einsum "ld,vd->lv"). The same float32 arrays
(written with numpy.save, read by `lumen repl` with loadNumpy); each operation's median of
REPETITIONS runs (101 for a row NumPy does in under 10 ms, whose timings move by more between
runs). NumPy and Lumen take turns for ROUNDS rounds, since this machine's memory bandwidth halves
for streaks of seconds (a plain C loop streaming 512 MB: 57 ms or 111 ms); each row's ratio is
NumPy's time over Lumen's in the same round (above 1: Lumen is faster), the median of the rounds'
reported with their range.
Usage: bench_tensors.py LUMEN [REPETITIONS [ROUNDS]]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

lumen = os.path.abspath(sys.argv[1])
repetitions = int(sys.argv[2]) if len(sys.argv) > 2 else 7
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
rng = np.random.default_rng(56)
arrays = {
    "logits": (rng.standard_normal(262_144) * 4).astype(np.float32),
    "batch": (rng.standard_normal((512, 49_152)) * 4).astype(np.float32),
    "resid": rng.standard_normal((30, 512, 576)).astype(np.float32),
    "a": rng.standard_normal((512, 576)).astype(np.float32),
    "b": rng.standard_normal((576, 49_152)).astype(np.float32),
    "w": rng.standard_normal((49_152, 576)).astype(np.float32),
}


def log_softmax(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


# (row, NumPy's call, Lumen's expression)
ROWS = [
    ("softmax [262144]", lambda x: softmax(x["logits"]), "softmax(logits)"),
    ("logSoftmax [512][49152]", lambda x: log_softmax(x["batch"]), "logSoftmax(batch, axis: -1)"),
] + [
    (f"{name} axis {axis} of [30][512][576]", (lambda name, axis: lambda x: getattr(np, name)(x["resid"], axis=axis))(name, axis), f"{name}(resid, axis: {axis})")
    for name in ("sum", "mean") for axis in range(3)
] + [
    ("matmul [512][576]·[576][49152]", lambda x: x["a"] @ x["b"], "matmul(a, b)"),
    ('einsum "ld,vd->lv" [512][576], [49152][576]', lambda x: np.einsum("ld,vd->lv", x["a"], x["w"]), 'einsum("ld,vd->lv", a, w)'),
]


def row_repetitions():
    """Each row's repetitions: 101 where one NumPy call takes under 10 ms."""
    counts = []
    for _, call, _ in ROWS:
        call(arrays)
        start = time.perf_counter()
        call(arrays)
        counts.append(101 if time.perf_counter() - start < 0.01 else repetitions)
    return counts


def numpy_times():
    times = []
    for (_, call, _), count in zip(ROWS, counts):
        call(arrays)
        runs = []
        for _ in range(count):
            start = time.perf_counter()
            call(arrays)
            runs.append(time.perf_counter() - start)
        times.append(statistics.median(runs))
    return times


counts = row_repetitions()
with tempfile.TemporaryDirectory() as directory:
    for name, array in arrays.items():
        np.save(os.path.join(directory, f"{name}.npy"), array)
    loads = "".join(f'let {name} = loadNumpy("{name}.npy")\n' for name in arrays)
    timing = ("func median(count, f) {\n    f()\n    let runs = range(count).map { _ in timed(f) }\n"
              "    return sorted(runs)[count / 2]\n}\n"
              "func timed(f) {\n    let start = now()\n    f()\n    return now() - start\n}\n")
    measure = "print(json([" + ", ".join(f"median({count}) {{ {expression} }}" for (_, _, expression), count in zip(ROWS, counts)) + "]))\n"
    script = os.path.join(directory, "bench.lumen")
    with open(script, "w") as file:
        file.write(loads + timing + measure)
    numpy_rounds, lumen_rounds = [], []
    for _ in range(rounds):
        numpy_rounds.append(numpy_times())
        result = subprocess.run([lumen, "repl", "--no-log", script], capture_output=True, text=True, cwd=directory, check=True)
        lumen_rounds.append(json.loads(result.stdout.strip().splitlines()[-1]))

print(f"NumPy {np.__version__}, {os.cpu_count()} cores; median of {repetitions} runs (rows under 10 ms: of 101); {rounds} rounds taking turns")
print("| operation | NumPy ms | Lumen ms | NumPy / Lumen (median of rounds) | rounds' range |")
print("|---|---|---|---|---|")
for row, (name, _, _) in enumerate(ROWS):
    numpy_row = [times[row] for times in numpy_rounds]
    lumen_row = [times[row] for times in lumen_rounds]
    ratios = [n / l for n, l in zip(numpy_row, lumen_row)]
    print(f"| {name} | {statistics.median(numpy_row) * 1e3:.2f} | {statistics.median(lumen_row) * 1e3:.2f} | "
          f"{statistics.median(ratios):.2f}× | {min(ratios):.2f}–{max(ratios):.2f} |")
