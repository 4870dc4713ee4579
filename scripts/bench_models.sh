#!/usr/bin/env bash
# Builds the benchmark models (once) and runs `lumen bench --json` on each, 2 threads, best of
# three runs; prints one line per model and test (generation with the measured read bandwidth and
# its limit) and keeps the JSON in .build/bench-results/.
# Usage: scripts/bench_models.sh [MODEL_NAMES...]   (default: every model below)
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${LUMEN_TEST_DATA:-../shared}
models=.build/bench-models
results=.build/bench-results
mkdir -p "$results"
.venv/bin/python scripts/make_bench_models.py "$shared/models" "$models" >/dev/null
swift build -c release -Xswiftc -warnings-as-errors >/dev/null
# Q4_K_M with Lumen's own quantizer (PyPI gguf cannot write K-quants): 110M from F32, 1.1B from Q8_0.
for source in 110M-f32 1.1B-q8_0; do
  target="$models/bench-${source%-*}-q4_k_m.gguf"
  [ -f "$target" ] || .build/release/lumen quantize "$models/bench-$source.gguf" "$target" Q4_K_M
done
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(15M-f32 15M-q8_0 15M-q4_0 110M-f32 110M-q8_0 110M-q4_0 110M-q4_k_m 1.1B-q8_0 1.1B-q4_0 1.1B-q4_k_m)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in "${names[@]}"; do
  for run in 1 2 3; do
    .build/release/lumen bench "$models/bench-$name.gguf" -t 2 -p 128 -n 128 -r 3 --bandwidth --json > "$results/$name.$run.json"
  done
  .venv/bin/python - "$results" "$name" <<'PY'
import json, sys
results, name = sys.argv[1], sys.argv[2]
runs = [json.load(open(f"{results}/{name}.{run}.json")) for run in (1, 2, 3)]
for index, row in enumerate(runs[0]):
    best = max(runs, key=lambda r: r[index]["avg_ts"])[index]
    line = f"{name:<12} {best['test']:<7} best of 3: {best['avg_ts']:9.2f} ± {best['stddev_ts']:.2f} tok/s"
    if best.get("bandwidth_gb_per_second"):
        line += (f"   read {best['bandwidth_gb_per_second']:.1f} GB/s, {best['bytes_per_token'] / 1e6:.1f} MB/token,"
                 f" limit {best['bandwidth_gb_per_second'] * 1e9 / best['bytes_per_token']:.1f} tok/s, best sample {100 * best['fraction_of_bandwidth_limit']:.0f}% of it")
    print(line)
PY
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
