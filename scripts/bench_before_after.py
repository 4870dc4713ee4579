#!/usr/bin/env python3
"""Two builds of Lumen in the same run, to show a change costs no speed: `lumen bench` of each on
the real models (and, given BENCH_SET, the bench set's 110M files of make bench-compare in every
format), 2 threads, pp512 and tg128, alternating builds for ROUNDS rounds of 3 repetitions and
keeping each build's best mean (see engine_comparison.py); which build goes first swaps round by
round.
Usage: bench_before_after.py LUMEN_BEFORE LUMEN_AFTER MODEL_CACHE [ROUNDS] [BENCH_SET]"""
import pathlib
import sys

from engine_comparison import arguments, speeds, test_name

before, after, cache = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
models = {name: str(pathlib.Path(cache) / file)
          for name, file in {"SmolLM2-135M-Instruct Q4_1": "SmolLM2-135M-Instruct.Q4_1.gguf", "Gemma-3-270M Q4_K_M": "gemma-3-270m-q4_k_m.gguf"}.items()}
if len(sys.argv) > 5:
    for path in sorted(pathlib.Path(sys.argv[5]).glob("bench-110M-*.gguf")):
        models["110M " + path.stem.removeprefix("bench-110M-").upper()] = str(path)
options = arguments((512,), (128,), (0,))

print("| model | test | before t/s | after t/s | after ÷ before |")
print("|---|---|---:|---:|---:|")
for name, path in models.items():
    best = {"before": {}, "after": {}}
    for index in range(rounds):
        # The order swaps round by round: on this machine whichever runs second in a round is
        # often ahead, so a fixed order favours one build.
        order = (("before", before), ("after", after))
        for build, binary in (order if index % 2 == 0 else order[::-1]):
            for test, value in speeds([binary, "bench", path] + options).items():
                best[build][test] = max(best[build].get(test, 0), value)
    for test in sorted(best["before"], key=lambda key: (key[0] == 0, key[0] or key[1])):
        old, new = best["before"][test], best["after"][test]
        print(f"| {name} | {test_name(*test)} | {old:.1f} | {new:.1f} | {new / old:.2f} |", flush=True)
