#!/usr/bin/env python3
"""Makes the llama.cpp quantization references for `lumen quantize`'s Q2_K, Q3_K_M and Q5_K_S with
an installed llama-cpp-python (`llama_model_quantize`, no importance matrix): it quantizes
SOURCE (../shared/models/quant-test-f32.gguf) with each scheme and records, for every tensor, the
type llama.cpp chose and the root-mean-square error of its weights (dequantized by PyPI's `gguf`)
against the source, plus the file size. Writes OUT (Tests/reference/quantization.json).
Usage: make_quantization_references.py SOURCE OUT"""
import json
import pathlib
import sys
import tempfile

import llama_cpp
import numpy
from gguf import GGUFReader
from gguf.quants import dequantize

source, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
SCHEMES = {"Q2_K": llama_cpp.LLAMA_FTYPE_MOSTLY_Q2_K, "Q3_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q3_K_M,
           "Q5_K_S": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_K_S}

originals = {t.name: numpy.asarray(t.data, dtype=numpy.float64).reshape(-1) for t in GGUFReader(str(source)).tensors}
references = {"source": source.name, "llama_cpp_python": llama_cpp.__version__, "schemes": {}}
llama_cpp.llama_backend_init()
with tempfile.TemporaryDirectory() as scratch:
    for name, ftype in SCHEMES.items():
        destination = pathlib.Path(scratch) / f"{name}.gguf"
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = ftype
        params.nthread = 1
        assert llama_cpp.llama_model_quantize(str(source).encode(), str(destination).encode(), params) == 0, name
        tensors = {}
        for tensor in GGUFReader(str(destination)).tensors:
            weights = dequantize(tensor.data, tensor.tensor_type).astype(numpy.float64).reshape(-1)
            error = float(numpy.sqrt(numpy.mean((weights - originals[tensor.name]) ** 2)))
            tensors[tensor.name] = {"type": tensor.tensor_type.name, "rms_error": error}
        references["schemes"][name] = {"file_bytes": destination.stat().st_size, "tensors": tensors}
out.write_text(json.dumps(references, indent=1, sort_keys=True) + "\n")
