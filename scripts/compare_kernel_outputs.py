#!/usr/bin/env python3
"""Compares kernel outputs (from Tests/KernelOutputs/kernel_outputs.c) of two builds, line by line.

Usage: compare_kernel_outputs.py REFERENCE OTHER...

REFERENCE is the AVX2 build's output, which the Swift tests check against scalar references; each
OTHER (the portable kernels on arm64 or x86-64) must give the same lines, every number within a
relative 1e-4 plus 1e-6 of the largest magnitude of its kind (for sums whose terms cancel), and
int8 activations exactly but for a rare tie rounded the other way (by 1). Without FMA (SIMDe on
x86-64 without AVX2) products and sums round separately, hence the tolerance; on arm64, with
NEON's fused multiply-add, the outputs have so far been the AVX2 kernels' bit for bit.
"""
import sys
from collections import defaultdict


def read(path):
    rows = {}
    with open(path) as file:
        for line in file:
            name, index, value = line.split()
            rows[(name, int(index))] = value
    return rows


def main():
    reference = read(sys.argv[1])
    magnitude = defaultdict(float)
    for (name, _), value in reference.items():
        if name != "variant":
            magnitude[name] = max(magnitude[name], abs(float(value)))
    failed = False
    for path in sys.argv[2:]:
        other = read(path)
        problems = []
        if other.keys() != reference.keys():
            problems.append(f"different lines: {len(reference)} against {len(other)}")
        ties = 0
        for key in sorted(reference.keys() & other.keys()):
            name, index = key
            a, b = reference[key], other[key]
            if name == "variant":
                print(f"{path}: {b} kernels against {a}")
                continue
            if name == "quantize_q8.values":
                if a != b:
                    ties += 1
                    if abs(int(a) - int(b)) > 1:
                        problems.append(f"{name}[{index}]: {a} against {b}")
                continue
            x, y = float(a), float(b)
            if abs(x - y) > 1e-4 * max(abs(x), abs(y)) + 1e-6 * magnitude[name]:
                problems.append(f"{name}[{index}]: {a} against {b}")
        if ties > len([k for k in reference if k[0] == "quantize_q8.values"]) // 200:
            problems.append(f"{ties} int8 activations differ (more than rounding ties)")
        for problem in problems[:20]:
            print(f"{path}: {problem}")
        print(f"{path}: {len(reference)} outputs, {len(problems)} differ beyond rounding")
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
