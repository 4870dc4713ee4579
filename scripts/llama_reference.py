"""What the scripts that make llama.cpp references share: the settings of ../shared/reference/
(1 thread, F32 KV cache, no flash attention) as context parameters, and ggml's tensor struct for
eval callbacks. Imported by the scripts beside it."""
import ctypes

import llama_cpp


class Tensor(ctypes.Structure):
    """ggml.h's struct ggml_tensor (GGML_MAX_DIMS 4, GGML_MAX_OP_PARAMS 64, GGML_MAX_SRC 10, GGML_MAX_NAME 64)."""
    _fields_ = [("type", ctypes.c_int), ("buffer", ctypes.c_void_p), ("ne", ctypes.c_int64 * 4), ("nb", ctypes.c_size_t * 4),
                ("op", ctypes.c_int), ("op_params", ctypes.c_int32 * 16), ("flags", ctypes.c_int32),
                ("src", ctypes.c_void_p * 10), ("view_src", ctypes.c_void_p), ("view_offs", ctypes.c_size_t),
                ("data", ctypes.c_void_p), ("name", ctypes.c_char * 64), ("extra", ctypes.c_void_p), ("padding", ctypes.c_char * 8)]


def context_parameters(size=512, callback=None):
    """A context of `size` positions (and batch) with the references' settings; `callback`, an
    eval callback, sees each graph node as it is computed."""
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = size
    params.n_batch = size
    params.n_threads = 1
    params.n_threads_batch = 1
    params.type_k = llama_cpp.GGML_TYPE_F32
    params.type_v = llama_cpp.GGML_TYPE_F32
    params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
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
