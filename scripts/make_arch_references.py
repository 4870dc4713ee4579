#!/usr/bin/env python3
"""llama.cpp's own random-weight models of the architectures Lumen runs, and llama.cpp references
made from them. `test-llama-archs -a ARCH -o DIR` (built from the llama.cpp that llama-cpp-python
vendors, as the Makefile's llama-server) writes each architecture's model with every optional
tensor its loader takes (biases, per-tensor scales, RoPE factors) and llama.cpp's `test` vocabulary
(text hashed five bytes at a time into ids); the references are greedy continuations of one prompt
with the settings of ../shared/reference/README.md (scripts/llama_reference.py), which
Tests/InferenceTests/ArchitectureFidelityTests.swift checks Lumen against, with the models' SHA-256.

Usage: make_arch_references.py --models TEST_LLAMA_ARCHS MODELS_DIR   (what make arch-models runs)
       make_arch_references.py TEST_LLAMA_ARCHS MODELS_DIR OUT_DIR      (the models, then the references)"""
import json
import pathlib
import subprocess
import sys

# The test models Lumen runs as llama.cpp does, by reference name: each later architecture is
# added here (test-llama-archs writes ARCH-dense.gguf, and ARCH-moe.gguf for those with experts).
MODELS = {
    "llama": "llama-dense", "llama-moe": "llama-moe", "qwen2": "qwen2-dense", "qwen3": "qwen3-dense",
    "gemma3": "gemma3-dense", "qwen3moe": "qwen3moe-moe", "smollm3": "smollm3-dense", "qwen35": "qwen35-dense",
    "qwen35moe": "qwen35moe-moe", "phi3": "phi3-dense", "gpt-oss": "gpt-oss-moe", "lfm2": "lfm2-dense",
    "lfm2moe": "lfm2moe-moe", "olmo2": "olmo2-dense",
}
# test-llama-archs draws a new seed each run unless given one: this one makes the models the
# references were made from, byte for byte.
SEED = 42
PROMPT = "The quick brown fox jumps over the lazy dog. 1234 + 5678 = 6912, and the dog did not mind."
STEPS = 32


def make_models(binary, models):
    """Writes the test models of MODELS' architectures into `models`."""
    models.mkdir(parents=True, exist_ok=True)
    architectures = sorted({model.rsplit("-", 1)[0] for model in MODELS.values()})
    pattern = "^(" + "|".join(architectures) + ")$"
    subprocess.run([str(binary), "-a", pattern, "-s", str(SEED), "-o", str(models)], check=True, capture_output=True)
    for model in MODELS.values():
        assert (models / f"{model}.gguf").exists(), f"test-llama-archs wrote no {model}.gguf"


def main(arguments):
    if arguments[0] == "--models":
        make_models(pathlib.Path(arguments[1]), pathlib.Path(arguments[2]))
        return
    binary, models, out = (pathlib.Path(argument) for argument in arguments)
    make_models(binary, models)
    import llama_cpp
    from llama_reference import greedy_reference
    llama_cpp.llama_backend_init()
    out.mkdir(parents=True, exist_ok=True)
    for name, model in MODELS.items():
        reference, logits = greedy_reference(models / f"{model}.gguf", PROMPT, STEPS, f"{name}.logits.bin")
        (out / f"{name}.logits.bin").write_bytes(logits)
        (out / f"{name}.json").write_text(json.dumps(reference, indent=1) + "\n")
        case = reference["cases"][0]
        print(name, case["prompt_ids"][:8], case["greedy_ids"][:8])


if __name__ == "__main__":
    main(sys.argv[1:])
