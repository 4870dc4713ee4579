#!/usr/bin/env python3
"""Tensor operations in Lumen against NumPy on this machine, same run: the issue's rows (softmax
over 262,144 logits, logSoftmax over [512][49152], sum and mean along each axis of
[30][512][576], matmul [512][576]·[576][49152], einsum "ld,vd->lv"). The same float32 arrays
(written with numpy.save, read by `lumen repl` with loadNumpy); each operation's median of
REPETITIONS runs (101 for a row NumPy does in under 10 ms, whose timings move by more between
runs), NumPy's measured before and after Lumen's and the faster kept; the ratio is NumPy's time
over Lumen's (above 1: Lumen is faster).
Usage: bench_tensors.py LUMEN [REPETITIONS]"""
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
    before = numpy_times()
    result = subprocess.run([lumen, "repl", "--no-log", script], capture_output=True, text=True, cwd=directory, check=True)
    lumen_times = json.loads(result.stdout.strip().splitlines()[-1])
    after = numpy_times()

numpy_best = [min(a, b) for a, b in zip(before, after)]
print(f"NumPy {np.__version__} ({np.show_config.__module__ and 'numpy'}), {os.cpu_count()} cores; median of {repetitions} (rows under 10 ms: of 101)")
print("| operation | NumPy ms | Lumen ms | NumPy / Lumen |")
print("|---|---|---|---|")
for (name, _, _), numpy_time, lumen_time in zip(ROWS, numpy_best, lumen_times):
    print(f"| {name} | {numpy_time * 1e3:.2f} | {lumen_time * 1e3:.2f} | {numpy_time / lumen_time:.2f}× |")
