#!/usr/bin/env python3
"""Measures how far llama.cpp's own activations move when its arithmetic moves by one rounding
step, on the two real models, so that tests can hold Lumen to llama.cpp exactly as closely as
llama.cpp holds to itself.

llama.cpp quantizes activations to 8 bits before each quantized product (Q8_0, Q8_1, Q8_K). That
rounding is a step function: a value computed with its additions in another order, one unit in
the last place away, can round to the next 8-bit level, and later blocks magnify the change (most
in Gemma 3, whose residual stream grows to a norm of 100,000 and whose Q8_K blocks share one scale
over 256 values). Any implementation that does not add in llama.cpp's exact order meets such flips.

With an installed llama-cpp-python's low-level C API and the settings of ../shared/reference/
(1 thread, F32 KV cache, no flash attention, BOS added, special tokens parsed, the prompt decoded
in one batch, every position an output), each run moves every value that every F32 node of the
graph computes (the KV cache's views aside) one unit in the last place up or down at random, as
the graph computes — what adding in another order does to each operation — and compares with
the unmoved run:
- `residual_cosine[layer][position]`: the least cosine of the moved residual stream with the unmoved;
- `attention_difference[layer]`: the largest difference of an attention probability (`kq_soft_max`);
- `direction_cosine[block]`: the least cosine of the contrastive direction (../shared/reference/
  inside/<model>-steer.json's pair, the last positions' residual streams' difference) with the unmoved;
- `perplexity_change`: the largest relative change of the running perplexity of
  Tests/reference/perplexity/story.txt after each window, computed as llama-perplexity does
  (windows of 256 tokens, each starting with BOS, its second half scored; F32 KV cache here),
  over PERPLEXITY_RUNS runs; the last is the final estimate's.
Writes OUT_DIR/sensitivity.json. Usage: make_sensitivity_references.py MODELS_DIR REFERENCE_DIR OUT_DIR"""
import ctypes
import json
import pathlib
import sys

import llama_cpp
import numpy

from llama_reference import Tensor, context_parameters, tokenize

models, reference, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
RUNS = 64
PERPLEXITY_RUNS = 16
PERPLEXITY_CONTEXT = 256
TEXT = pathlib.Path(__file__).resolve().parent.parent / "Tests/reference/perplexity/story.txt"
MODELS = {"smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3": "gemma-3-270m-q4_k_m.gguf"}


def move(tensor, random):
    """Moves every value of an F32 node (not the KV cache's views, not a strided view) one ulp up
    or down at random; returns the node's values (None if it was left alone)."""
    if tensor.type != 0 or tensor.name.decode().startswith("cache_"):
        return None
    shape = [tensor.ne[i] for i in range(4)]
    count = shape[0] * shape[1] * shape[2] * shape[3]
    if tensor.nb[0] != 4 or tensor.nb[1] != 4 * shape[0] or tensor.nb[2] != tensor.nb[1] * shape[1] or tensor.nb[3] != tensor.nb[2] * shape[2]:
        return None  # a strided view: its values are its source's
    array = numpy.ctypeslib.as_array(ctypes.cast(tensor.data, ctypes.POINTER(ctypes.c_float)), shape=(count,))
    if random is not None:
        up = random.random(count) < 0.5
        array[:] = numpy.where(up, numpy.nextafter(array, numpy.float32(numpy.inf)), numpy.nextafter(array, numpy.float32(-numpy.inf)))
    return array


def decode_all(context, tokens):
    """Decodes `tokens` in one batch with every position an output."""
    batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
    for position, token in enumerate(tokens):
        batch.token[position] = token
        batch.pos[position] = position
        batch.n_seq_id[position] = 1
        batch.seq_id[position][0] = 0
        batch.logits[position] = True
    batch.n_tokens = len(tokens)
    assert llama_cpp.llama_decode(context, batch) == 0
    llama_cpp.llama_batch_free(batch)


def perplexity(model, seed=None):
    """story.txt's running perplexity after each window, as llama-perplexity computes it; with
    `seed`, every node moved one ulp."""
    random = numpy.random.default_rng(seed) if seed is not None else None

    @llama_cpp.ggml_backend_sched_eval_callback
    def callback(pointer, ask, _):
        if not ask:
            move(Tensor.from_address(pointer), random)
        return True

    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    text = TEXT.read_bytes()
    buffer = (llama_cpp.llama_token * (len(text) + 16))()
    tokens = list(buffer[:llama_cpp.llama_tokenize(vocab, text, len(text), buffer, len(buffer), True, False)])
    total, count, running = 0.0, 0, []
    for start in range(0, len(tokens) - PERPLEXITY_CONTEXT + 1, PERPLEXITY_CONTEXT):
        window = tokens[start:start + PERPLEXITY_CONTEXT]
        context = llama_cpp.llama_init_from_model(model, context_parameters(PERPLEXITY_CONTEXT, callback))
        decode_all(context, [llama_cpp.llama_vocab_bos(vocab)] + window[1:])
        for position in range(PERPLEXITY_CONTEXT // 2, PERPLEXITY_CONTEXT - 1):
            logits = numpy.ctypeslib.as_array(ctypes.cast(llama_cpp.llama_get_logits_ith(context, position), ctypes.POINTER(ctypes.c_float)),
                                              shape=(n_vocab,)).astype(numpy.float64)
            largest = logits.max()
            total -= logits[window[position + 1]] - largest - numpy.log(numpy.exp(logits - largest).sum())
            count += 1
        llama_cpp.llama_free(context)
        running.append(numpy.exp(total / count))
    return numpy.array(running)


def run(model, prompt, seed=None):
    """`prompt`'s residual stream [layer][position][width] and attention probabilities
    [layer][head][query][key]; with `seed`, every value each node computes moved one ulp."""
    random = numpy.random.default_rng(seed) if seed is not None else None
    residual, attention = {}, {}

    @llama_cpp.ggml_backend_sched_eval_callback
    def callback(pointer, ask, _):
        if ask:
            return True
        tensor = Tensor.from_address(pointer)
        name = tensor.name.decode()
        if name.startswith("kq_soft_max-") and name not in attention and tensor.type == 0:
            # [head][query][key over the whole cache]; the prompt's keys come first.
            shape = [tensor.ne[i] for i in range(3)]
            attention[name] = numpy.ctypeslib.as_array(ctypes.cast(tensor.data, ctypes.POINTER(ctypes.c_float)),
                                                       shape=(shape[2], shape[1], shape[0])).copy()
        array = move(tensor, random)
        if array is not None and name.startswith("l_out-"):
            residual[name] = array.reshape(-1, tensor.ne[0]).copy()
        return True

    context = llama_cpp.llama_init_from_model(model, context_parameters(512, callback))
    tokens = tokenize(model, prompt)
    count = len(tokens)
    decode_all(context, tokens)
    llama_cpp.llama_free(context)
    layers = len(residual)
    return (numpy.stack([residual[f"l_out-{layer}"] for layer in range(layers)]),
            numpy.stack([attention[f"kq_soft_max-{layer}"][:, :, :count] for layer in range(layers)]))


def cosine(a, b):
    a, b = a.astype(numpy.float64), b.astype(numpy.float64)
    return (a * b).sum(-1) / (numpy.linalg.norm(a, axis=-1) * numpy.linalg.norm(b, axis=-1))


llama_cpp.llama_backend_init()
result = {"reference": f"llama-cpp-python {llama_cpp.__version__}", "runs": RUNS, "perplexity_runs": PERPLEXITY_RUNS, "models": {}}
for name, file in MODELS.items():
    model = llama_cpp.llama_model_load_from_file(str(models / file).encode(), llama_cpp.llama_model_default_params())
    acts = json.loads((reference / f"{name}-acts.json").read_text())
    steer = json.loads((reference / f"{name}-steer.json").read_text())
    residual, attention = run(model, acts["prompt"])
    expected = numpy.fromfile(reference / f"{name}-acts.l_out.bin", dtype=numpy.float32).reshape(residual.shape)
    assert numpy.array_equal(residual, expected), "the unmoved run is not the shared reference's"
    positive, negative = run(model, steer["positive"])[0][:, -1], run(model, steer["negative"])[0][:, -1]
    least_residual = numpy.ones(residual.shape[:2])
    largest_attention = numpy.zeros(residual.shape[0])
    least_direction = numpy.ones(residual.shape[0])
    for seed in range(RUNS):
        moved, moved_attention = run(model, acts["prompt"], seed)
        least_residual = numpy.minimum(least_residual, cosine(moved, residual))
        largest_attention = numpy.maximum(largest_attention, numpy.abs(moved_attention - attention).max(axis=(1, 2, 3)))
        direction = run(model, steer["positive"], 2 * RUNS + seed)[0][:, -1] - run(model, steer["negative"], 3 * RUNS + seed)[0][:, -1]
        least_direction = numpy.minimum(least_direction, cosine(direction, positive - negative))
    unmoved = perplexity(model)
    change = numpy.max([numpy.abs(perplexity(model, 4 * RUNS + seed) / unmoved - 1) for seed in range(PERPLEXITY_RUNS)], axis=0)
    result["models"][name] = {
        "file": file,
        "residual_cosine": [[round(float(c), 6) for c in layer] for layer in least_residual],
        "attention_difference": [round(float(d), 6) for d in largest_attention],
        # Block 0 has no direction (llama.cpp's control vectors start at block 1).
        "direction_cosine": {str(block): round(float(least_direction[block]), 6) for block in range(1, len(least_direction))},
        "perplexity": [round(float(value), 4) for value in unmoved],
        "perplexity_change": [round(float(value), 5) for value in change],
    }
    llama_cpp.llama_model_free(model)
    print(name, "least residual cosine", least_residual.min(), "largest attention difference", largest_attention.max(),
          "least direction cosine", least_direction[1:].min(), "perplexity", unmoved, "largest change", change)
out.mkdir(parents=True, exist_ok=True)
(out / "sensitivity.json").write_text(json.dumps(result, indent=1) + "\n")
