#!/usr/bin/env python3
"""Makes llama.cpp references for Lumen's built-in chat formats (BuiltinChatTemplate) with an
installed llama-cpp-python (its low-level C API):

- `formats`: what llama_chat_apply_template renders for each built-in name (gemma, llama3, phi3,
  chatml) and each conversation below, with and without the generation prompt;
- `gemma`: a conversation with Gemma-3-270M (whose file has no chat template) rendered with
  llama.cpp's "gemma" format, its prompt tokens (BOS added, special tokens parsed) and llama.cpp's
  greedy continuation (1 thread, F32 KV cache, no flash attention, one token per call), each step with the margin
  between its top two logits, so a test compares only the steps where the choice is clear.

Usage: make_chat_template_references.py GEMMA_GGUF OUT_JSON"""
import ctypes
import hashlib
import json
import pathlib
import sys

import llama_cpp
import numpy

NAMES = ["gemma", "llama3", "phi3", "chatml"]
CONVERSATIONS = [
    [{"role": "user", "content": "Hello"}],
    [{"role": "system", "content": "  You are terse. "}, {"role": "user", "content": " Hi there \n"},
     {"role": "assistant", "content": " Hello! "}, {"role": "user", "content": "How are you?"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b\n\nc"}, {"role": "user", "content": "d"}],
    [{"role": "system", "content": "S1"}, {"role": "system", "content": "S2"}, {"role": "user", "content": "u"}],
]
GEMMA_CONVERSATION = [{"role": "user", "content": "What is the capital of France?"}]
STEPS = 16


def apply(name, messages, add_generation_prompt):
    array = (llama_cpp.llama_chat_message * len(messages))()
    keep = []
    for index, message in enumerate(messages):
        role, content = message["role"].encode(), message["content"].encode()
        keep += [role, content]
        array[index].role, array[index].content = role, content
    size = 1 << 16
    buffer = ctypes.create_string_buffer(size)
    length = llama_cpp.llama_chat_apply_template(name.encode(), array, len(messages), add_generation_prompt, buffer, size)
    assert 0 <= length < size, (name, length)
    return buffer.raw[:length].decode()


def gemma_reference(path):
    llama_cpp.llama_backend_init()
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    vocab = llama_cpp.llama_model_get_vocab(model)
    parameters = llama_cpp.llama_context_default_params()
    parameters.n_ctx, parameters.n_batch, parameters.n_threads, parameters.n_threads_batch = 512, 512, 1, 1
    parameters.type_k = parameters.type_v = llama_cpp.GGML_TYPE_F32
    parameters.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    context = llama_cpp.llama_init_from_model(model, parameters)
    prompt = apply("gemma", GEMMA_CONVERSATION, True)
    data = prompt.encode()
    tokens = (llama_cpp.llama_token * 512)()
    count = llama_cpp.llama_tokenize(vocab, data, len(data), tokens, 512, True, True)
    prompt_ids = list(tokens[:count])
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    steps = []
    batch = (llama_cpp.llama_token * len(prompt_ids))(*prompt_ids)
    assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(batch, len(prompt_ids))) == 0
    for _ in range(STEPS):
        logits = numpy.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(context, -1), shape=(n_vocab,)).copy()
        order = numpy.argsort(-logits, kind="stable")
        token = int(order[0])
        steps.append({"id": token, "margin": float(logits[order[0]] - logits[order[1]])})
        one = (llama_cpp.llama_token * 1)(token)
        assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(one, 1)) == 0
    return {
        "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "messages": GEMMA_CONVERSATION,
        "prompt": prompt,
        "prompt_ids": prompt_ids,
        "steps": steps,
    }


def main():
    gemma, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    formats = {name: [{"messages": messages, "add_generation_prompt": add, "output": apply(name, messages, add)}
                      for messages in CONVERSATIONS for add in (True, False)] for name in NAMES}
    out.write_text(json.dumps({"llama_cpp_python": llama_cpp.__version__, "formats": formats, "gemma": gemma_reference(gemma)},
                              indent=1, ensure_ascii=False) + "\n")


main()
