#!/usr/bin/env python3
"""Writes what Python itself gives for the values PythonText formats: `repr` and `json.dumps` of
floats (each given as float.hex(), so the JSON file carries it exactly) and `repr` and
`json.dumps` (with and without ensure_ascii) of strings, into OUT_JSON
(Tests/reference/python-text.json).
Usage: make_python_text_references.py OUT_JSON"""
import json
import math
import sys

floats = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.0 / 3.0, 1e-4, 1e-5, 1.5e-7, 123.456, 1e15, 1e16, 1e17, 9007199254740993.0,
          1234567890123456.7, 12345678901234567.0, 1e22, 1e-300, 5e-324, 1.7976931348623157e308, -2.5e-10, 3.14159,
          math.inf, -math.inf, math.nan, 100.0, 0.30000000000000004, 4.35, 1e100]
strings = ["", "plain", 'quote " and backslash \\', "it's", "it's \"both\"", "new\nline\ttab\rreturn", "\b\f\x00\x1f\x7f",
           "\x85\xa0 latin-1 controls and no-break space", "café", "你好", "emoji 😀 beyond the BMP", "\u2028 line separator",
           "\u200b\ufeff format", "\ue000 private \U000f0000", "\u0378 unassigned", "\u3000 ideographic space", "</script>"]
out = {
    "floats": [{"hex": value.hex() if math.isfinite(value) else repr(value), "repr": repr(value), "json": json.dumps(value)}
               for value in floats],
    "strings": [{"text": text, "repr": repr(text), "json": json.dumps(text, ensure_ascii=False), "ascii": json.dumps(text)}
                for text in strings],
}
with open(sys.argv[1], "w") as file:
    json.dump(out, file, indent=1, ensure_ascii=True)
    file.write("\n")
