"""A GGUF file's metadata and tensor types read straight from its header, with struct, as the
format's specification lays it out. The gguf package's reader makes a NumPy view of every array
element, which takes 50 s for a 262,144-token vocabulary; the tests and the scripts that copy a
vocabulary into random-weight models (`gguf_vocabulary`) need only the header, read here in a
fraction of a second. The tensor types are named by the gguf package's own table."""
import mmap
import struct

from gguf import GGMLQuantizationType

# The value types of GGUF metadata: the struct format of each fixed-size one.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class _Cursor:
    def __init__(self, data):
        self.data, self.offset = data, 0

    def take(self, form):
        """The values of struct format `form` at the cursor, as a tuple."""
        values = struct.unpack_from("<" + form, self.data, self.offset)
        self.offset += struct.calcsize("<" + form)
        return values

    def one(self, form):
        return self.take(form)[0]

    def string(self):
        length = self.one("Q")
        text = self.data[self.offset:self.offset + length].decode("utf-8", errors="replace")
        self.offset += length
        return text

    def value(self, kind):
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            element, count = self.one("I"), self.one("Q")
            if element in _SCALARS:
                return list(self.take(f"{count}{_SCALARS[element]}")) if count else []
            return [self.value(element) for _ in range(count)]
        return self.one(_SCALARS[kind])


def read_header(path):
    """(metadata as {key: value}, tensors as {name: type name}) of the GGUF file at `path`."""
    metadata, tensors = read_typed_header(path)
    return {key: value for key, (_kind, value) in metadata.items()}, tensors


def read_tensor_layout(path):
    """(metadata as {key: value}, tensors as [(name, shape, gguf.GGMLQuantizationType, offset of
    its data in the file)]) of the GGUF file at `path`."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        cursor = _Cursor(data)
        metadata, tensors = _read(cursor, path)
        alignment = metadata.get("general.alignment", (4, 32))[1]
        start = (cursor.offset + alignment - 1) // alignment * alignment
        return ({key: value for key, (_kind, value) in metadata.items()},
                [(name, shape, kind, start + offset) for name, shape, kind, offset in tensors])


def _read(cursor, path):
    """The typed metadata and the tensors (name, shape, type, offset in the data) at the cursor,
    which is left where the data begins (before its alignment)."""
    if cursor.data[:4] != b"GGUF":
        raise ValueError(f"{path} is not a GGUF file")
    cursor.offset = 4
    _version, tensor_count, metadata_count = cursor.take("IQQ")
    metadata = {}
    for _ in range(metadata_count):
        key = cursor.string()
        kind = cursor.one("I")
        metadata[key] = (kind, cursor.value(kind))
    tensors = []
    for _ in range(tensor_count):
        name = cursor.string()
        shape = list(cursor.take(f"{cursor.one('I')}Q"))
        tensors.append((name, shape, GGMLQuantizationType(cursor.one("I")), cursor.one("Q")))
    return metadata, tensors


def read_typed_header(path):
    """As `read_header`, each metadata value with its type: {key: (gguf.GGUFValueType number,
    value)}, an array's type ARRAY (9), in file order."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        metadata, tensors = _read(_Cursor(data), path)
        return metadata, {name: kind.name for name, _shape, kind, _offset in tensors}
