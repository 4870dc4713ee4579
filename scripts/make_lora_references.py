#!/usr/bin/env python3
"""Makes llama.cpp references for LoRA adapters (scripts/make_lora_adapters.py) on the synthetic
models, llama.cpp's own random-weight ones (their prompt as in Tests/reference/archs/) and the real ones, with an installed llama-cpp-python (its C API: llama_adapter_lora_init,
llama_set_adapters_lora) and the settings of ../shared/reference/README.md: greedy, teacher-forced
as RealModelTests reads it (llama_reference.greedy_reference). Writes <case>.json and
<case>.logits.bin (the logits after the prompt; for the real models, after the first greedy token
too) into OUT_DIR, each JSON saying where its model comes from ("source": synthetic, arch or real).
Usage: make_lora_references.py SYNTHETIC_DIR ARCH_MODELS_DIR MODEL_CACHE ADAPTERS_DIR OUT_DIR [CASE...]
(only the CASEs named, when some are)."""
import json
import pathlib
import sys

import llama_cpp

from llama_reference import greedy_reference
from make_lora_adapters import adapters as all_adapters

synthetic, architectures, cache, adapters, out = (pathlib.Path(argument) for argument in sys.argv[1:6])
chosen_cases = set(sys.argv[6:])
out.mkdir(parents=True, exist_ok=True)
SYNTHETIC_PROMPT = "An adapter changes what the model says next, a little:"
STORY = "Once upon a time, there was a little robot who"
# Gemma 3 with its adapter nearly ties its top two tokens after the story (margin 0.035): the
# recorded positions need a clear argmax.
QUESTION = "Question: Why is the sky blue?\nAnswer:"
SMOLLM2, GEMMA3 = cache / "SmolLM2-135M-Instruct.Q4_1.gguf", cache / "gemma-3-270m-q4_k_m.gguf"

ARCH_PROMPT = json.loads((pathlib.Path(__file__).parent.parent / "Tests/reference/archs/llama.json").read_text())["cases"][0]["prompt"]

# case: (source, model, [(adapter, scale)], prompt, greedy steps, recorded logits): each synthetic and
# random-weight model with its adapter, then the real models' cases.
CASES = {name.removesuffix("-r8"): (source, model, [(name, 1.0)], SYNTHETIC_PROMPT if source == "synthetic" else ARCH_PROMPT, 16, 1)
         for name, (source, model, *_rest) in all_adapters(synthetic, architectures, cache).items() if source != "real"}
CASES.update({
    "smollm2-one": ("real", SMOLLM2, [("smollm2-r16", 1.0)], STORY, 32, 2),
    "smollm2-two": ("real", SMOLLM2, [("smollm2-r16", 0.7), ("smollm2-r8", -0.4)], STORY, 32, 2),
    "smollm2-f16": ("real", SMOLLM2, [("smollm2-r16-f16", 1.0)], STORY, 32, 2),
    "gemma3-one": ("real", GEMMA3, [("gemma3-r16", 1.0)], QUESTION, 32, 2),
})

llama_cpp.llama_backend_init()
for name, (source, model, chosen, prompt, steps, recorded) in CASES.items():
    if chosen_cases and name not in chosen_cases:
        continue
    reference, logits = greedy_reference(model, prompt, steps, f"{name}.logits.bin",
                                         adapters=[(adapters / f"{adapter}.gguf", scale) for adapter, scale in chosen], recorded=recorded)
    reference["source"] = source
    (out / f"{name}.logits.bin").write_bytes(logits)
    (out / f"{name}.json").write_text(json.dumps(reference, indent=1) + "\n")
    print(name, reference["cases"][0]["greedy_ids"][:8])
