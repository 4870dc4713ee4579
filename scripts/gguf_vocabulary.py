"""Copies a GGUF file's tokenizer keys (its vocabulary, merges, special tokens and chat template)
into a gguf.GGUFWriter: the random-weight models get a family's real vocabulary this way."""
import functools

import gguf

from gguf_header import read_typed_header


@functools.cache
def metadata(path):
    """The typed metadata of the GGUF file at `path` (`read_typed_header`), read once per file:
    several models share a vocabulary."""
    return read_typed_header(path)[0]


def copy_vocabulary(writer, path, keys="tokenizer.", overrides=None):
    """Writes every key of the file at `path` that starts with `keys` into `writer`, those of
    `overrides` with the value it gives instead; returns the vocabulary size."""
    fields = metadata(path)
    for key, (kind, value) in fields.items():
        if not key.startswith(keys) or key == "general.architecture":
            continue
        if overrides and key in overrides:
            writer.add_string(key, overrides[key])
        elif kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, value)
        elif kind in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
            writer.add_float32(key, value)
        else:
            writer.add_uint32(key, int(value))
    return len(fields["tokenizer.ggml.tokens"][1])
