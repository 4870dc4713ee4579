#!/usr/bin/env python3
"""Writes about 1 MB of mixed text for the tokenizer benchmark: the strings of llama.cpp's
tokenizer tests (English, accents, CJK, emoji, code, whitespace runs, digits) and the chat
templates' text, shuffled with a fixed seed so every run tokenizes the same bytes.
Usage: tokenizer_corpus.py SHARED_DIR OUT_FILE [BYTES]"""
import json
import pathlib
import random
import sys

shared, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
size = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
pieces = []
for reference in sorted((shared / "reference/tokenizer").glob("*.json")):
    pieces += [case["text"] for case in json.loads(reference.read_text())["cases"] if case["text"]]
for template in sorted((shared / "reference/templates").glob("*.jinja")):
    pieces += [paragraph for paragraph in template.read_text().split("\n\n") if paragraph.strip()]
generator = random.Random(20261123)
chunks, total = [], 0
while total < size:
    piece = generator.choice(pieces)
    chunks.append(piece)
    total += len(piece.encode()) + 1
out.write_bytes("\n".join(chunks).encode()[:size].decode(errors="ignore").encode())
