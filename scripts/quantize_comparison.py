"""`lumen quantize` against llama-quantize in the same run: both convert the same source file to
each target type on 2 threads, alternating engines for a number of rounds; each engine's best wall
time and its peak resident memory (the child's maximum RSS) are kept. Imported by bench_compare.py."""
import os
import pathlib
import subprocess
import tempfile
import time


def measure(command):
    """Wall seconds and peak RSS in MiB of `command`, its output discarded."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({process.returncode}): {error[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def print_table(lumen_binary, llama_quantize, sources, types, rounds):
    """Prints a Markdown row per source (name → path) and target type."""
    print("| source | to | llama.cpp s | Lumen s | speed, Lumen ÷ llama.cpp | llama.cpp peak RSS MiB | Lumen peak RSS MiB | RSS, Lumen ÷ llama.cpp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as scratch:
        output = str(pathlib.Path(scratch) / "out.gguf")
        for name, source in sources.items():
            for kind in types:
                engines = {"llama": [llama_quantize, source, output, kind, "2"],
                           "lumen": [lumen_binary, "quantize", source, output, kind, "-t", "2"]}
                best = {}
                for _ in range(rounds):
                    for engine, command in engines.items():
                        seconds, rss = measure(command)
                        os.remove(output)
                        previous = best.get(engine, (float("inf"), 0))
                        best[engine] = (min(previous[0], seconds), max(previous[1], rss))
                (theirs, their_rss), (mine, my_rss) = best["llama"], best["lumen"]
                print(f"| {name} | {kind} | {theirs:.1f} | {mine:.1f} | {theirs / mine:.2f} | {their_rss:.0f} | {my_rss:.0f} | {my_rss / their_rss:.2f} |",
                      flush=True)
