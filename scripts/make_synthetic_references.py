#!/usr/bin/env python3
"""Makes llama.cpp references for the synthetic models of scripts/make_synthetic_models.py with an
installed llama-cpp-python (its low-level C API), with the settings of ../shared/reference/README.md:
1 thread, F32 KV cache, no flash attention, the prompt tokenized with add_special and
parse_special and decoded in one call, then greedy (lowest id on ties) one token per call, not
stopping at end-of-generation tokens. Writes <name>.json and <name>.logits.bin (the logits after
the prompt and after the first greedy token, little-endian float32) into OUT_DIR.
Usage: make_synthetic_references.py MODELS_DIR OUT_DIR"""
import json
import pathlib
import sys

import llama_cpp

from llama_reference import greedy_reference

models, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
PROMPTS = {
    "qwen2": "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
    "qwen3": "The quick brown fox jumps over the lazy dog. 1234 + 5678 =",
    "phi3": "<|user|>\nTell me a story about a dragon.<|end|>\n<|assistant|>\n",
    "llama3": "<|start_header_id|>user<|end_header_id|>\n\nHello there!<|eot_id|>",
    "phi3long": "<|user|>\nCount from one to twenty, slowly, in words.<|end|>\n<|assistant|>\n",
    "qwen3moe": "<|im_start|>user\nName three rivers in Europe.<|im_end|>\n<|im_start|>assistant\n",
    "smollm3": "Once upon a time, in a land far away, there lived a",
    "qwen35": "<|im_start|>user\nWhat is a recurrent state? Explain it step by step, then give an example.<|im_end|>\n<|im_start|>assistant\n",
    "qwen35moe": "Experts are chosen for each token by a router; a shared expert sees every token.",
    "gptoss": "<|im_start|>user\nWhy do the sliding layers forget? Say it in a few long sentences.<|im_end|>\n<|im_start|>assistant\n",
    "lfm2moe": "<|start_header_id|>user<|end_header_id|>\n\nA short convolution remembers the last three tokens, and attention the rest.<|eot_id|>",
    "gemma4": "<|turn>user\nThe sliding layers see eight tokens; the full ones see all of them, and the last two borrow their caches.<turn|>\n<|turn>model\n",
    "gemma4moe": "A dense feed-forward and routed experts, side by side in every layer of a Gemma 4 mixture.",
    "olmo2": "<|start_header_id|>user<|end_header_id|>\n\nNorms after each branch, none before it; three sliding layers, then a full one.<|eot_id|>",
}
STEPS = 32

llama_cpp.llama_backend_init()
for name, prompt in PROMPTS.items():
    reference, logits = greedy_reference(models / f"{name}.gguf", prompt, STEPS, f"{name}.logits.bin")
    (out / f"{name}.logits.bin").write_bytes(logits)
    (out / f"{name}.json").write_text(json.dumps(reference, indent=1) + "\n")
    case = reference["cases"][0]
    print(name, case["prompt_ids"][:8], case["greedy_ids"][:8])
