"""Copies a GGUF file's tokenizer keys (its vocabulary, merges, special tokens and chat template)
into a gguf.GGUFWriter: the random-weight models get a family's real vocabulary this way.

The keys are read straight from the file's header (`read_metadata`) rather than with
gguf.GGUFReader, which makes a NumPy view of every string of every array: 50 s for Gemma's
262,144 tokens and their merges, where this takes under a second."""
import functools
import struct

import gguf

# Each scalar type's struct format (GGUF's little-endian layout).
SCALARS = {
    gguf.GGUFValueType.UINT8: "<B", gguf.GGUFValueType.INT8: "<b", gguf.GGUFValueType.UINT16: "<H",
    gguf.GGUFValueType.INT16: "<h", gguf.GGUFValueType.UINT32: "<I", gguf.GGUFValueType.INT32: "<i",
    gguf.GGUFValueType.FLOAT32: "<f", gguf.GGUFValueType.BOOL: "<?", gguf.GGUFValueType.UINT64: "<Q",
    gguf.GGUFValueType.INT64: "<q", gguf.GGUFValueType.FLOAT64: "<d",
}


@functools.cache
def read_metadata(path):
    """The key-value pairs of the GGUF file at `path`, in file order: key -> (type, value), an
    array's type ARRAY and its value the list of its items (as GGUFReader's `types[0]` and
    `contents()` give them); each file is read once."""
    data = open(path, "rb").read()
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    count = struct.unpack_from("<Q", data, 16)[0]
    offset = 24

    def string():
        nonlocal offset
        length = struct.unpack_from("<Q", data, offset)[0]
        offset += 8 + length
        return data[offset - length:offset].decode("utf-8")

    def value(kind):
        nonlocal offset
        if kind == gguf.GGUFValueType.STRING:
            return string()
        scalar = struct.Struct(SCALARS[kind])
        offset += scalar.size
        return scalar.unpack_from(data, offset - scalar.size)[0]

    fields = {}
    for _ in range(count):
        key = string()
        kind = gguf.GGUFValueType(struct.unpack_from("<I", data, offset)[0])
        offset += 4
        if kind == gguf.GGUFValueType.ARRAY:
            item, length = struct.unpack_from("<IQ", data, offset)
            offset += 12
            if item == gguf.GGUFValueType.STRING:
                items = [string() for _ in range(length)]
            else:
                numbers = struct.Struct(f"<{length}{SCALARS[gguf.GGUFValueType(item)][1:]}")
                items = list(numbers.unpack_from(data, offset))
                offset += numbers.size
            fields[key] = (gguf.GGUFValueType.ARRAY, items)
        else:
            fields[key] = (kind, value(kind))
    return fields


def copy_vocabulary(writer, path, keys="tokenizer.", overrides=None):
    """Writes every key of the file at `path` that starts with `keys` into `writer`, those of
    `overrides` with the value it gives instead; returns the vocabulary size."""
    fields = read_metadata(path)
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
