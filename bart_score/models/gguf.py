"""GGUF checkpoints: the optional extra they need, and what bartscore reads of a file before transformers loads it.

A GGUF file is a header (magic bytes, version, counts), metadata key/values (the architecture, its hyperparameters,
the tokenizer, the chat template), a table of tensors (name, shape, type, offset), then the tensor data. bartscore
reads everything before the data itself, with a bounded walk over a memory map that never touches the tensors and
builds no metadata array: that is enough to refuse a file that is not GGUF, is cut short or damaged (before a load
that would fail deep inside a library), or whose metadata is over the bounds below (before transformers' reader,
which builds every array in full, takes gigabytes for it), to name the file's architecture, to tell whether it has a
chat template, to list its tensors' sizes (which a config is checked against before a model is built), and to digest
the file for the model's identity. transformers reads the rest when the model loads (``from_pretrained(folder,
gguf_file=name)``), dequantizing every tensor to the dtype asked for."""

from __future__ import annotations

import hashlib
import importlib
import math
import mmap
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import CheckpointLoadError, MissingExtraError
from ..messages import FileName

GGUF_SUFFIX = ".gguf"
INSTALL_GGUF_EXTRA = 'pip install "bartscore[gguf]"'
# What transformers needs to read a GGUF checkpoint: the file format, and accelerate for its loading path.
GGUF_PACKAGES = ("gguf", "accelerate")
# Bounds on what the header may ask a reader to build, each item's and the whole header's. transformers' GGUF reader
# (gguf's GGUFReader) makes numpy objects for every key, array element and tensor: 1.5 KB and 70 us per element once
# transformers has parsed them (measured on a 500,000-element array), 60 us per empty string (a million: 60 s and
# 2 GB), 2 ms per metadata key (65,000 keys: 130 s) and about 1 s per MiB of strings, so counts are bounded, not
# bytes alone (a 32 MB file can hold 4 million empty strings). The real files that size them: SmolLM2-135M (33 keys,
# 272 tensors, 98,369 strings of 793,618 bytes, 147,205 array elements), Gemma 3 270M (33 keys, 236 tensors, 262,425
# strings of 2,321,604 bytes, 786,436 array elements) and Llama 3's tokenizer (128,256 tokens and 280,147 merges:
# 408,403 strings of 4,037,034 bytes; 536,659 array elements with the token types).
MAX_STRING_BYTES = 1 << 20  # one string: a key, a tensor name, a token, a chat template (real ones: tens of KiB)
MAX_STRINGS_BYTES = 16 << 20  # every string of the header together: 4 times Llama 3's tokenizer
MAX_STRINGS = 786_432  # the header's strings (keys, values, array elements, tensor names): 3 times Gemma 3's vocabulary
MAX_METADATA_KEYS = 1_024  # real files have about 33
MAX_TENSORS = 1 << 14  # real files have up to about 1,100 (Llama 3.1 405B: 1,138); 60,000 took 22 s to load
MAX_ARRAY_ENTRIES = 1 << 16  # any array outside the tokenizer's (real files: arrays of one element per layer)
MAX_VOCABULARY = 1 << 19  # 524,288 tokens: twice the largest real vocabulary (Gemma 3's 262,144)
# The tokenizer's arrays and their bounds: one element per token, or (merges) a few per token: Llama 3 has 2.18
# merges per token (280,147 for 128,256 tokens). The merges are bounded by the file's own tokens as well.
MERGES_PER_TOKEN = 4
_TOKENS, _MERGES = "tokenizer.ggml.tokens", "tokenizer.ggml.merges"
_VOCABULARY_ARRAYS = {_TOKENS: 1, "tokenizer.ggml.scores": 1, "tokenizer.ggml.token_type": 1, _MERGES: MERGES_PER_TOKEN}
_CHARSMAP = "tokenizer.ggml.precompiled_charsmap"  # sentencepiece's normalizer (T5): bytes, about 240 KB in T5's
# Every array of the file together (Gemma 3's tokens, scores and types: 786,432), about 1.5 GB in transformers' reader.
MAX_ARRAY_ELEMENTS = 1 << 20
# llama.cpp's bound on a tensor's dimensions (GGML_MAX_DIMS).
_MAX_DIMENSIONS = 4
# The struct format of each scalar metadata type, by GGUF's type number (strings and arrays are walked apart).
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_UINT32, _STRING, _ARRAY = 4, 8, 9
_MAGIC = b"GGUF"
_EMBEDDING = "token_embd.weight"
_ARCHITECTURE = "general.architecture"
CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
_KEPT_STRINGS = (_ARCHITECTURE, CHAT_TEMPLATE_KEY)


def is_gguf_path(name: str) -> bool:
    """Whether a checkpoint name is the path of a GGUF file (by its suffix, which is how GGUF files are named)."""
    return name.lower().endswith(GGUF_SUFFIX)


def require_gguf_extra(checkpoint: str) -> None:
    """Raises MissingExtraError, naming the pip command, when a package GGUF loading needs is not installed."""
    missing = [package for package in GGUF_PACKAGES if not _importable(package)]
    if missing:
        raise MissingExtraError(
            FileName(checkpoint),
            f" is a GGUF checkpoint, and loading it needs {' and '.join(missing)}, not installed here",
            remedy=INSTALL_GGUF_EXTRA,
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

    tensor_elements: the number of values of each tensor, by its name in the file. digest: SHA-256 of every byte
    before the tensor data (header, metadata key/values, tensor table). chat_template: the metadata's
    tokenizer.chat_template, or None where it has none (a base model's file)."""

    architecture: str
    version: int
    tensor_elements: Mapping[str, int]
    digest: str
    chat_template: str | None = None


class _Malformed(Exception):
    """What is wrong with a file that is not a valid GGUF file (the message completes "<path> ...")."""


class _TooShort(_Malformed):
    def __init__(self) -> None:
        super().__init__("is truncated: its GGUF header runs past the end of the file")


class _Cursor:
    """Reads GGUF values from a memory map, in the file's byte order, refusing any read past its end, and counts the
    strings it reads against MAX_STRINGS and MAX_STRINGS_BYTES."""

    def __init__(self, view: mmap.mmap, order: str, position: int) -> None:
        self.view = view
        self.order = order
        self.position = position
        self.strings = 0
        self.strings_bytes = 0

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

    def check_strings(self, count: int, what: str) -> None:
        """Refuses `count` more strings (`what` holding them) past MAX_STRINGS in all."""
        if self.strings + count > MAX_STRINGS:
            raise _Malformed(
                f"is refused: its header holds {self.strings + count:,} strings by {what}, over the limit of "
                f"{MAX_STRINGS:,} in all"
            )

    def string(self, what: str) -> str:
        """A string, `what` naming it for an error: at most MAX_STRING_BYTES, in UTF-8, within the header's bounds."""
        length = self.integer("Q")
        if length > MAX_STRING_BYTES:
            raise _Malformed(
                f"is refused: {what} is a string of {length:,} bytes, over the limit of {MAX_STRING_BYTES:,}"
            )
        self.check_strings(1, what)
        self.strings += 1
        self.strings_bytes += length
        if self.strings_bytes > MAX_STRINGS_BYTES:
            raise _Malformed(
                f"is refused: its header's strings hold {self.strings_bytes:,} bytes by {what}, over the limit of "
                f"{MAX_STRINGS_BYTES:,} in all"
            )
        start = self.position
        self.skip(length)
        try:
            return bytes(self.view[start : self.position]).decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Malformed(
                f"is not a valid GGUF file: {what} is not valid UTF-8 (byte {start + error.start:,} of the file)"
            ) from None


@dataclass(frozen=True)
class _Tensor:
    offset: int  # in the data, after the header
    length: int  # bytes
    shape: tuple[int, ...]  # innermost first, as GGUF lists it


def read_gguf_header(path: str) -> GgufHeader:
    """Reads and checks the part of a GGUF file before its tensor data, bounded (see MAX_STRING_BYTES and below), so
    that what transformers' reader builds from it is bounded too. CheckpointLoadError names the file when it is not
    GGUF, is of a version the gguf package does not read, is damaged (a key or tensor twice, an array of arrays, a
    general.alignment that is not a power of two in a UINT32, text that is not UTF-8, a tensor off its alignment, a
    token embedding of other than 2 dimensions), is truncated (its tensors end past its size), or its header is over
    a bound (an item's, or all its items') or holds more tokens than its embedding has rows."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 4 or handle.read(4) != _MAGIC:
                raise _Malformed("is not a GGUF file (it does not start with the GGUF magic bytes)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return _read_header(view)
    except _Malformed as problem:
        raise CheckpointLoadError(FileName(path), f" {problem}") from None
    except OSError as error:
        raise CheckpointLoadError(
            "cannot read the GGUF file ", FileName(path), f": {error.strerror or error}"
        ) from None


def _read_header(view: mmap.mmap) -> GgufHeader:
    from gguf import GGUF_DEFAULT_ALIGNMENT
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
    for count, what, limit in ((key_count, "metadata keys", MAX_METADATA_KEYS), (tensor_count, "tensors", MAX_TENSORS)):
        if count > limit:
            raise _Malformed(f"is refused: its header counts {count:,} {what}, over the limit of {limit:,}")
    strings, alignment, arrays = _read_metadata(cursor, key_count)
    architecture = strings.get(_ARCHITECTURE)
    alignment = GGUF_DEFAULT_ALIGNMENT if alignment is None else alignment
    tensors = _read_tensor_table(cursor, tensor_count, alignment)
    header_end = cursor.position
    data_start = -(-header_end // alignment) * alignment
    data_end = max((data_start + tensor.offset + tensor.length for tensor in tensors.values()), default=data_start)
    if data_end > len(view):
        raise _Malformed(f"is truncated: its tensors end at byte {data_end:,}, but the file has {len(view):,} bytes")
    if architecture is None:
        raise _Malformed("is not a complete GGUF checkpoint: its metadata names no general.architecture")
    _check_vocabulary(arrays, tensors)
    return GgufHeader(
        architecture=architecture,
        version=version,
        tensor_elements={name: math.prod(tensor.shape) for name, tensor in tensors.items()},
        digest=hashlib.sha256(view[:header_end]).hexdigest(),
        chat_template=strings.get(CHAT_TEMPLATE_KEY),
    )


def _read_metadata(cursor: _Cursor, key_count: int) -> tuple[dict[str, str], int | None, dict[str, int]]:
    """(the string values kept (_KEPT_STRINGS) by key, general.alignment, the arrays' counts by key) of the metadata,
    walked with its bounds."""
    seen: set[str] = set()
    arrays: dict[str, int] = {}
    strings: dict[str, str] = {}
    alignment: int | None = None
    for _ in range(key_count):
        key = cursor.string(f"the name of metadata key {len(seen) + 1}")
        if key in seen:
            raise _Malformed(f"is not a valid GGUF file: its metadata key {key!r} is there twice")
        seen.add(key)
        kind = cursor.integer("I")
        if kind == _STRING:
            text = cursor.string(f"the metadata value {key!r}")
            if key in _KEPT_STRINGS:
                strings[key] = text
        elif kind in _SCALAR_FORMATS:
            value = cursor.unpack(_SCALAR_FORMATS[kind])
            if key == "general.alignment":
                alignment = _checked_alignment(kind, value)
        elif kind == _ARRAY:
            arrays[key] = _skip_array(cursor, key, sum(arrays.values()))
        else:
            raise _Malformed(f"is not a valid GGUF file: its metadata value {key!r} has the unknown type {kind}")
        if key == "general.alignment" and alignment is None:
            raise _Malformed(f"is not a valid GGUF file: its general.alignment is of type {kind}, not a UINT32")
    merges, tokens = arrays.get(_MERGES, 0), arrays.get(_TOKENS, 0)
    if merges > MERGES_PER_TOKEN * tokens:
        raise _Malformed(
            f"is refused: its metadata array {_MERGES!r} has {merges:,} elements, over the limit of "
            f"{MERGES_PER_TOKEN} for each of its {tokens:,} tokens"
        )
    return strings, alignment, arrays


def _checked_alignment(kind: int, value: object) -> int:
    """general.alignment: a power of two in a UINT32, as gguf's reader and llama.cpp require."""
    if kind != _UINT32:
        raise _Malformed(f"is not a valid GGUF file: its general.alignment is of type {kind}, not a UINT32")
    assert isinstance(value, int)  # a UINT32
    if value < 1 or value & (value - 1):
        raise _Malformed(f"is not a valid GGUF file: its general.alignment is {value}, not a power of two")
    return value


def _skip_array(cursor: _Cursor, key: str, elements_before: int) -> int:
    """Walks over the array `key` without building it, its count checked against its bounds first (its own, and with
    the `elements_before` of the arrays before it, MAX_ARRAY_ELEMENTS); gives the count."""
    item_kind, count = cursor.integer("I"), cursor.integer("Q")
    if item_kind == _ARRAY:
        raise _Malformed(f"is not a valid GGUF file: its metadata value {key!r} is an array of arrays")
    if item_kind != _STRING and item_kind not in _SCALAR_FORMATS:
        raise _Malformed(f"is not a valid GGUF file: its metadata array {key!r} has the unknown type {item_kind}")
    limit = _array_limit(key)
    if count > limit:
        raise _Malformed(f"is refused: its metadata array {key!r} has {count:,} elements, over the limit of {limit:,}")
    if elements_before + count > MAX_ARRAY_ELEMENTS:
        raise _Malformed(
            f"is refused: its metadata arrays hold {elements_before + count:,} elements by {key!r}, over the limit "
            f"of {MAX_ARRAY_ELEMENTS:,} in all"
        )
    if item_kind == _STRING:
        cursor.check_strings(count, f"the metadata array {key!r}")
        for index in range(count):
            cursor.string(f"element {index} of the metadata array {key!r}")
    else:
        cursor.skip(count * struct.calcsize(cursor.order + _SCALAR_FORMATS[item_kind]))
    return count


def _array_limit(key: str) -> int:
    if key in _VOCABULARY_ARRAYS:
        return _VOCABULARY_ARRAYS[key] * MAX_VOCABULARY
    return MAX_STRING_BYTES if key == _CHARSMAP else MAX_ARRAY_ENTRIES


def _read_tensor_table(cursor: _Cursor, tensor_count: int, alignment: int) -> dict[str, _Tensor]:
    """Each tensor's entry in the table, by name."""
    from gguf import GGML_QUANT_SIZES

    tensors: dict[str, _Tensor] = {}
    for index in range(tensor_count):
        name = cursor.string(f"the name of tensor {index}")
        if name in tensors:
            raise _Malformed(f"is not a valid GGUF file: its tensor {name!r} is there twice")
        dimensions = cursor.integer("I")
        if dimensions > _MAX_DIMENSIONS:
            raise _Malformed(
                f"is not a valid GGUF file: its tensor {name!r} has {dimensions} dimensions (at most {_MAX_DIMENSIONS})"
            )
        shape = [cursor.integer("Q") for _ in range(dimensions)]
        kind, offset = cursor.integer("I"), cursor.integer("Q")
        if kind not in GGML_QUANT_SIZES:
            raise _Malformed(f"is not a valid GGUF file: its tensor {name!r} has the unknown type {kind}")
        block, block_bytes = GGML_QUANT_SIZES[kind]  # type: ignore[index]  # keyed by an IntEnum, which equals its int
        if shape and shape[0] % block:
            raise _Malformed(
                f"is not a valid GGUF file: its tensor {name!r} has rows of {shape[0]} values, not a whole number of "
                f"its type's blocks of {block}"
            )
        if offset % alignment:
            raise _Malformed(
                f"is not a valid GGUF file: its tensor {name!r} starts at offset {offset}, off its alignment "
                f"({alignment})"
            )
        tensors[name] = _Tensor(offset, math.prod(shape) // block * block_bytes, tuple(shape))
    return tensors


def _check_vocabulary(arrays: dict[str, int], tensors: dict[str, _Tensor]) -> None:
    """The tokenizer's per-token arrays hold at most one entry per row of the embedding (token_embd.weight), where
    the file has one: a token without a row could not be scored, and a vocabulary beyond the weights only costs
    memory."""
    if _EMBEDDING not in tensors:
        return
    shape = tensors[_EMBEDDING].shape
    if len(shape) != 2:
        raise _Malformed(
            f"is not a valid GGUF file: its token embedding ({_EMBEDDING}) has {len(shape)} dimensions, not 2 "
            f"(hidden size, vocabulary)"
        )
    rows = shape[-1]  # GGUF lists a shape innermost first: (hidden size, vocabulary)
    for key in (_TOKENS, "tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        if arrays.get(key, 0) > rows:
            raise _Malformed(
                f"is refused: its metadata array {key!r} has {arrays[key]:,} entries, more than the "
                f"{rows:,} rows of its token embedding ({_EMBEDDING})"
            )
