"""Copies a GGUF file's tokenizer keys (its vocabulary, merges, special tokens and chat template)
into a gguf.GGUFWriter: the random-weight models get a family's real vocabulary this way."""
import gguf


def copy_vocabulary(writer, path, keys="tokenizer.", overrides=None):
    """Writes every key of the file at `path` that starts with `keys` into `writer`, those of
    `overrides` with the value it gives instead; returns the vocabulary size."""
    reader = gguf.GGUFReader(str(path))
    for key, field in reader.fields.items():
        if not key.startswith(keys) or key.startswith("GGUF.") or key == "general.architecture":
            continue
        if overrides and key in overrides:
            writer.add_string(key, overrides[key])
            continue
        value = field.contents()
        kind = field.types[0]
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, value)
        elif kind in (gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.FLOAT64):
            writer.add_float32(key, value)
        else:
            writer.add_uint32(key, int(value))
    return len(reader.fields["tokenizer.ggml.tokens"].contents())
