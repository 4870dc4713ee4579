"""What the scripts that make llama.cpp references share: the settings of ../shared/reference/
(1 thread, F32 KV cache, no flash attention) as context parameters, ggml's tensor struct for
eval callbacks, and a model's greedy reference. Imported by the scripts beside it."""
import ctypes
import hashlib
import pathlib

import llama_cpp
import numpy


class Tensor(ctypes.Structure):
    """ggml.h's struct ggml_tensor (GGML_MAX_DIMS 4, GGML_MAX_OP_PARAMS 64, GGML_MAX_SRC 10, GGML_MAX_NAME 64)."""
    _fields_ = [("type", ctypes.c_int), ("buffer", ctypes.c_void_p), ("ne", ctypes.c_int64 * 4), ("nb", ctypes.c_size_t * 4),
                ("op", ctypes.c_int), ("op_params", ctypes.c_int32 * 16), ("flags", ctypes.c_int32),
                ("src", ctypes.c_void_p * 10), ("view_src", ctypes.c_void_p), ("view_offs", ctypes.c_size_t),
                ("data", ctypes.c_void_p), ("name", ctypes.c_char * 64), ("extra", ctypes.c_void_p), ("padding", ctypes.c_char * 8)]


def context_parameters(size=512, callback=None, cache_type=None):
    """A context of `size` positions (and batch) with the references' settings; `callback`, an
    eval callback, sees each graph node as it is computed; `cache_type`, a ggml type for keys and
    values instead of F32 (a quantized one with flash attention, which llama.cpp needs for it)."""
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = size
    params.n_batch = size
    params.n_threads = 1
    params.n_threads_batch = 1
    params.type_k = llama_cpp.GGML_TYPE_F32
    params.type_v = llama_cpp.GGML_TYPE_F32
    params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    if cache_type is not None:
        params.type_k = params.type_v = cache_type
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    if callback is not None:
        params.cb_eval = callback
    return params


def tokenize(model, text, capacity=512):
    """`text`'s token ids as the references tokenize: BOS added, special tokens parsed."""
    vocab = llama_cpp.llama_model_get_vocab(model)
    data = text.encode()
    buffer = (llama_cpp.llama_token * capacity)()
    count = llama_cpp.llama_tokenize(vocab, data, len(data), buffer, capacity, True, True)
    return list(buffer[:count])


def greedy_reference(path, prompt, steps, logits_name, adapters=(), recorded=2, cache_type=None):
    """llama.cpp's greedy continuation of `prompt` by the model at `path`, as RealModelTests reads
    it: the prompt tokenized with add_special and parse_special and decoded in one call, then
    greedy (lowest id on ties) one token per call, not stopping at end-of-generation tokens;
    `adapters`, LoRA adapters as (path, scale), set on the context (llama_set_adapters_lora);
    `cache_type`, the KV cache's ggml type when not F32 (context_parameters).
    Returns the reference JSON (with the model's SHA-256, and each adapter's) and the logits after
    the prompt and after each of the first `recorded` - 1 greedy tokens (little-endian float32),
    to be written as `logits_name`."""
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), llama_cpp.llama_model_default_params())
    context = llama_cpp.llama_init_from_model(model, context_parameters(cache_type=cache_type))
    loaded = [llama_cpp.llama_adapter_lora_init(model, str(adapter).encode()) for adapter, _scale in adapters]
    assert all(loaded), "llama.cpp refused an adapter"
    if loaded:
        handles = (llama_cpp.llama_adapter_lora_p_ctypes * len(loaded))(*loaded)
        scales = (ctypes.c_float * len(loaded))(*[scale for _adapter, scale in adapters])
        assert llama_cpp.llama_set_adapters_lora(context, handles, len(loaded), scales) == 0
    n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
    prompt_ids = tokenize(model, prompt, capacity=1024)

    def decode(ids):
        array = (llama_cpp.llama_token * len(ids))(*ids)
        assert llama_cpp.llama_decode(context, llama_cpp.llama_batch_get_one(array, len(ids))) == 0
        pointer = llama_cpp.llama_get_logits_ith(context, -1)
        return numpy.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()

    logits = decode(prompt_ids)
    greedy, top1, margins, kept = [], [], [], []
    for step in range(steps):
        if step < recorded:
            kept.append(logits.astype("<f4"))
        token = int(numpy.argmax(logits))  # the first maximum: lowest id wins ties
        ordered = numpy.sort(logits)
        probabilities = numpy.exp(logits - logits.max())
        top1.append(float(probabilities.max() / probabilities.sum()))
        margins.append(float(ordered[-1] - ordered[-2]))
        greedy.append(token)
        logits = decode([token])
    for adapter in loaded:
        llama_cpp.llama_adapter_lora_free(adapter)
    llama_cpp.llama_free(context)
    llama_cpp.llama_model_free(model)
    reference = {
        "model": path.name,
        "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "reference": f"llama-cpp-python {llama_cpp.__version__}",
        "cases": [{"prompt": prompt, "prompt_ids": prompt_ids, "n_predict": steps, "greedy_ids": greedy,
                   "top1_prob": top1, "top2_margin": margins, "n_vocab": n_vocab, "n_logits": recorded, "logits_bin": logits_name}],
    }
    if adapters:
        reference["adapters"] = [{"adapter": pathlib.Path(adapter).name, "scale": scale,
                                  "adapter_sha256": hashlib.sha256(pathlib.Path(adapter).read_bytes()).hexdigest()} for adapter, scale in adapters]
    return reference, numpy.concatenate(kept).tobytes()
