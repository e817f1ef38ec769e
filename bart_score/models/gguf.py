"""GGUF checkpoints: the optional extra they need, and what bartscore reads of a file before transformers loads it.

A GGUF file is a header (magic bytes, version, counts), metadata key/values (the architecture, its hyperparameters,
the tokenizer, the chat template), a table of tensors (name, shape, type, offset), then the tensor data. bartscore
reads everything before the data itself, with a bounded walk over a memory map that never touches the tensors: that
is enough to refuse a file that is not GGUF or is cut short (before a load that would fail deep inside a library), to
name the file's architecture, and to digest the file for the model's identity. transformers reads the rest when the
model loads (``from_pretrained(folder, gguf_file=name)``), dequantizing every tensor to the dtype asked for."""

from __future__ import annotations

import hashlib
import importlib
import math
import mmap
import os
import struct
from dataclasses import dataclass

from ..errors import CheckpointLoadError, MissingExtraError

GGUF_SUFFIX = ".gguf"
INSTALL_GGUF_EXTRA = 'pip install "bartscore[gguf]"'
# What transformers needs to read a GGUF checkpoint: the file format, and accelerate for its loading path.
GGUF_PACKAGES = ("gguf", "accelerate")
# Arrays of arrays are legal GGUF; no real file nests them deeper than this, and a walk deeper is refused.
_MAX_ARRAY_DEPTH = 8
# The struct format of each scalar metadata type, by GGUF's type number (strings and arrays are walked apart).
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_NEEDED_KEYS = ("general.architecture", "general.alignment")
_MAGIC = b"GGUF"


def is_gguf_path(name: str) -> bool:
    """Whether a checkpoint name is the path of a GGUF file (by its suffix, which is how GGUF files are named)."""
    return name.lower().endswith(GGUF_SUFFIX)


def require_gguf_extra(checkpoint: str) -> None:
    """Raises MissingExtraError, naming the pip command, when a package GGUF loading needs is not installed."""
    missing = [package for package in GGUF_PACKAGES if not _importable(package)]
    if missing:
        raise MissingExtraError(
            f"{checkpoint!r} is a GGUF checkpoint, and loading GGUF needs the optional packages "
            f"{' and '.join(GGUF_PACKAGES)} ({', '.join(missing)} not installed here): {INSTALL_GGUF_EXTRA}"
        )


def _importable(package: str) -> bool:
    try:
        importlib.import_module(package)
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class GgufHeader:
    """What bartscore knows of a GGUF file without its tensors.

    digest: SHA-256 of every byte before the tensor data (header, metadata key/values, tensor table)."""

    architecture: str
    version: int
    tensor_count: int
    digest: str


class _Malformed(Exception):
    """What is wrong with a file that is not a valid GGUF file (the message completes "<path> ...")."""


class _TooShort(_Malformed):
    def __init__(self) -> None:
        super().__init__("is truncated: its GGUF header runs past the end of the file")


class _Cursor:
    """Reads GGUF values from a memory map, in the file's byte order, refusing any read past its end."""

    def __init__(self, view: mmap.mmap, order: str, position: int) -> None:
        self.view = view
        self.order = order
        self.position = position

    def unpack(self, code: str) -> int | float | bool:
        layout = struct.Struct(self.order + code)
        if self.position + layout.size > len(self.view):
            raise _TooShort
        (value,) = layout.unpack_from(self.view, self.position)
        self.position += layout.size
        return value

    def integer(self, code: str) -> int:
        """An unsigned integer field ("I" or "Q"): a count, a length, a type or an offset."""
        value = self.unpack(code)
        assert isinstance(value, int)  # struct gives ints for integer codes
        return value

    def skip(self, size: int) -> None:
        if self.position + size > len(self.view):
            raise _TooShort
        self.position += size

    def string(self) -> str:
        length = self.integer("Q")
        start = self.position
        self.skip(length)
        return bytes(self.view[start : self.position]).decode("utf-8", errors="replace")

    def value(self, kind: int, depth: int = 0) -> object:
        """A metadata value of GGUF type `kind`; an array is walked over and given as None."""
        if kind == _STRING:
            return self.string()
        if kind in _SCALAR_FORMATS:
            return self.unpack(_SCALAR_FORMATS[kind])
        if kind != _ARRAY:
            raise _Malformed(f"is not a valid GGUF file: a metadata value has the unknown type {kind}")
        if depth >= _MAX_ARRAY_DEPTH:
            raise _Malformed(f"is not a valid GGUF file: its metadata arrays nest more than {_MAX_ARRAY_DEPTH} deep")
        item_kind, count = self.integer("I"), self.integer("Q")
        if item_kind in _SCALAR_FORMATS:
            self.skip(count * struct.calcsize(self.order + _SCALAR_FORMATS[item_kind]))
        else:
            for _ in range(count):  # strings and arrays each take bytes, so a false count soon runs out of file
                self.value(item_kind, depth + 1)
        return None


def read_gguf_header(path: str) -> GgufHeader:
    """Reads and checks the part of a GGUF file before its tensor data. CheckpointLoadError names the file when it
    is not GGUF, is of a version the gguf package does not read, or is truncated (its tensors end past its size)."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 4 or handle.read(4) != _MAGIC:
                raise _Malformed("is not a GGUF file (it does not start with the GGUF magic bytes)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _read_header(view)
    except _Malformed as problem:
        raise CheckpointLoadError(f"{path} {problem}") from None
    except OSError as error:
        raise CheckpointLoadError(f"cannot read the GGUF file {path}: {error.strerror or error}") from None


def _read_header(view: mmap.mmap) -> GgufHeader:
    from gguf import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT
    from gguf.gguf_reader import READER_SUPPORTED_VERSIONS

    order = "<"
    version = _Cursor(view, order, 4).integer("I")
    if version not in READER_SUPPORTED_VERSIONS and _Cursor(view, ">", 4).integer("I") in READER_SUPPORTED_VERSIONS:
        order = ">"  # a big-endian file
        version = _Cursor(view, order, 4).integer("I")
    if version not in READER_SUPPORTED_VERSIONS:
        readable = ", ".join(map(str, READER_SUPPORTED_VERSIONS))
        raise _Malformed(f"is a GGUF file of version {version}, which the gguf package does not read (only {readable})")
    cursor = _Cursor(view, order, 8)
    tensor_count, key_count = cursor.integer("Q"), cursor.integer("Q")
    needed: dict[str, object] = {}
    for _ in range(key_count):
        key = cursor.string()
        value = cursor.value(cursor.integer("I"))
        if key in _NEEDED_KEYS:
            needed[key] = value
    tensor_bytes: list[tuple[int, int]] = []  # (offset in the data, length) of each tensor
    for _ in range(tensor_count):
        name = cursor.string()
        elements = math.prod(cursor.integer("Q") for _ in range(cursor.integer("I")))
        kind, offset = cursor.integer("I"), cursor.integer("Q")
        if kind not in GGML_QUANT_SIZES:
            raise _Malformed(f"is not a valid GGUF file: its tensor {name!r} has the unknown type {kind}")
        block, block_bytes = GGML_QUANT_SIZES[kind]  # type: ignore[index]  # keyed by an IntEnum, which equals its int
        tensor_bytes.append((offset, elements // block * block_bytes))
    header_end = cursor.position
    alignment = needed.get("general.alignment") or GGUF_DEFAULT_ALIGNMENT
    if not isinstance(alignment, int) or alignment < 1:
        raise _Malformed(f"is not a valid GGUF file: its general.alignment is {alignment!r}, not a positive integer")
    data_start = -(-header_end // alignment) * alignment
    data_end = max((data_start + offset + length for offset, length in tensor_bytes), default=data_start)
    if data_end > len(view):
        raise _Malformed(f"is truncated: its tensors end at byte {data_end:,}, but the file has {len(view):,} bytes")
    architecture = needed.get("general.architecture")
    if not isinstance(architecture, str):
        raise _Malformed("is not a complete GGUF checkpoint: its metadata names no general.architecture")
    return GgufHeader(
        architecture=architecture,
        version=version,
        tensor_count=tensor_count,
        digest=hashlib.sha256(view[:header_end]).hexdigest(),
    )
