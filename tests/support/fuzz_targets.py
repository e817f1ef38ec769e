"""The fuzz targets (see fuzzing.py): the GGUF header reader, the safetensors header reading, Signature.parse, and
the readers of tables (CSV, JSON lines), JSON files and plain-text files. Each is registered at import.

Binary formats are fuzzed by mutating real files: an input is a recipe (a seed's name and the mutations applied to
its header), so that a finding is a short line that the tests keep as a fixed case. The GGUF seeds are the tests'
tiny Llama and Qwen2 files (support/gguf.py) and, in a long run, the header of the real SmolLM2 file (its first
2 MiB, the rest of its size left sparse). A mutation writes a value that counts or sizes something (a string's
length, an array's count, a type, a tensor's dimensions or offset) as often as it changes a byte, since those are
what a reader must not trust."""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from support.fuzzing import Target, register

# Values that a count, a length, a type or an offset is mutated to (cut to the field's width).
_EDGES = (0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 31, 32, 255, 256, 1 << 16, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32)
_EDGES += ((1 << 63) - 1, 1 << 63, (1 << 64) - 1)
_SCRATCH = tempfile.mkdtemp(prefix="bartscore-fuzz-")  # one folder per process, for the files the targets read
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)


def scratch(name: str) -> str:
    return os.path.join(_SCRATCH, name)


# -- mutations of bytes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """A real file to mutate: its first bytes (`head`, where every mutation falls), its size (the rest is sparse
    zeros: the header readers never look at it), the (offset, width) of each integer field in `head`, and the
    (offset, dimensions) of each tensor's shape (its count of dimensions, then each dimension)."""

    name: str
    head: bytes
    size: int
    fields: tuple[tuple[int, int], ...]
    shapes: tuple[tuple[int, int], ...] = ()


def _mutations(seed: Seed) -> st.SearchStrategy[tuple[Any, ...]]:
    """One mutation of `seed`: a field set to an edge value or a random one, or taken out; a tensor's shape
    rewritten; a byte changed, bytes inserted or deleted, the head cut, or the file's size changed."""
    end = len(seed.head)
    position = st.integers(0, max(end - 1, 0))
    field = st.integers(0, max(len(seed.fields) - 1, 0))
    value = st.one_of(st.sampled_from(_EDGES), st.integers(0, (1 << 64) - 1))
    return st.one_of(
        st.tuples(st.just("field"), field, value),
        st.tuples(st.just("field+"), field, st.integers(-3, 3)),
        st.tuples(st.just("unfield"), field),
        st.tuples(st.just("shape"), st.integers(0, max(len(seed.shapes) - 1, 0)), st.lists(value, max_size=5)),
        st.tuples(st.just("byte"), position, st.integers(0, 255)),
        st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("delete"), position, st.integers(1, 16)),
        st.tuples(st.just("cut"), position),
        st.tuples(st.just("size"), st.integers(0, 2)),
    )


def mutated(seed: Seed, mutations: tuple[tuple[Any, ...], ...]) -> tuple[bytes, int]:
    """(head, file size) of `seed` with `mutations` applied in order (a field's offset is the seed's, so a field
    mutation after an insertion may fall elsewhere: any bytes are fair)."""
    head, size = bytearray(seed.head), seed.size
    for kind, *arguments in mutations:
        if kind in ("field", "field+") and seed.fields:
            offset, width = seed.fields[arguments[0] % len(seed.fields)]
            old = int.from_bytes(head[offset : offset + width], "little")
            new = arguments[1] if kind == "field" else old + arguments[1]
            head[offset : offset + width] = (new % (1 << (8 * width))).to_bytes(width, "little")
        elif kind == "unfield" and seed.fields:  # the field taken out: a dimension, a count, a length
            offset, width = seed.fields[arguments[0] % len(seed.fields)]
            del head[offset : offset + width]
        elif kind == "shape" and seed.shapes:  # a tensor's shape rewritten whole: none, 5 dimensions, huge ones
            offset, dimensions = seed.shapes[arguments[0] % len(seed.shapes)]
            shape = struct.pack(f"<I{len(arguments[1])}Q", len(arguments[1]), *(d % (1 << 64) for d in arguments[1]))
            head[offset : offset + 4 + 8 * dimensions] = shape
        elif kind == "byte" and arguments[0] < len(head):
            head[arguments[0]] = arguments[1]
        elif kind == "insert":
            head[arguments[0] : arguments[0]] = arguments[1]
        elif kind == "delete":
            del head[arguments[0] : arguments[0] + arguments[1]]
        elif kind == "cut":
            del head[arguments[0] :]
            size = len(head)
        elif kind == "size":
            size = (len(head), seed.size - 1, seed.size)[arguments[0]]
    return bytes(head), max(size, len(head))


def write_file(path: str, head: bytes, size: int) -> str:
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)  # sparse: no disk for the tensors the header readers never read
    return path


def _recipes(seeds: dict[str, Seed]) -> st.SearchStrategy[tuple[str, tuple[tuple[Any, ...], ...]]]:
    """(seed name, mutations), a recipe of mutated() that a finding names in one line."""
    return st.sampled_from(sorted(seeds)).flatmap(
        lambda name: st.tuples(st.just(name), st.lists(_mutations(seeds[name]), max_size=6).map(tuple))
    )


# -- GGUF headers ----------------------------------------------------------------------------------------------------

_GGUF_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_fields(data: bytes) -> tuple[int, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """(where the header ends, the (offset, width) of its integer fields, the (offset, dimensions) of its tensors'
    shapes) of a valid little-endian GGUF file, by a plain walk of the format (independent of the reader under
    test)."""
    fields = [(8, 8), (16, 8)]
    shapes = []
    position = 24
    tensors, keys = struct.unpack_from("<QQ", data, 8)

    def integer(width: int) -> int:
        nonlocal position
        fields.append((position, width))
        value = int.from_bytes(data[position : position + width], "little")
        position += width
        return value

    def string() -> None:
        nonlocal position
        length = integer(8)
        position += length

    for _ in range(keys):
        string()
        kind = integer(4)
        if kind == 8:
            string()
        elif kind == 9:
            item, count = integer(4), integer(8)
            for _ in range(count):
                if item == 8:
                    string()
                else:
                    position += _GGUF_SCALARS[item]
        elif _GGUF_SCALARS[kind] >= 4:  # a value that may count or size something
            integer(_GGUF_SCALARS[kind])
        else:
            position += _GGUF_SCALARS[kind]
    for _ in range(tensors):
        string()
        at = position
        dimensions = integer(4)
        shapes.append((at, dimensions))
        for _ in range(dimensions):
            integer(8)
        integer(4)
        integer(8)
    return position, tuple(fields), tuple(shapes)


def _gguf_seed(name: str, path: str, head_bytes: int | None = None) -> Seed:
    with open(path, "rb") as handle:
        data = handle.read(head_bytes or -1)
    end, fields, shapes = gguf_fields(data)
    return Seed(name, data[: max(end, head_bytes or 0)], os.path.getsize(path), fields, shapes)


def gguf_seeds(thorough: bool) -> dict[str, Seed]:
    """The tests' tiny GGUF files, and in a long run (thorough) the real SmolLM2 header."""
    return {**_tiny_gguf_seeds(), **({"smollm2": _smollm2_seed()} if thorough else {})}


@functools.cache
def _tiny_gguf_seeds() -> dict[str, Seed]:
    import numpy as np

    from support.gguf import build_tiny_causal, write_gguf

    seeds = {}
    for architecture, dtype in (("llama", np.float32), ("qwen2", np.float16)):
        model, tokenizer = build_tiny_causal(architecture, float16_values=dtype == np.float16)
        path = write_gguf(model, tokenizer, scratch(f"seed-{architecture}.gguf"), tensor_dtype=dtype)
        seeds[f"tiny-{architecture}"] = _gguf_seed(f"tiny-{architecture}", path)
    return seeds


@functools.cache
def _smollm2_seed() -> Seed:
    """The real SmolLM2 file's first 2 MiB (its header, 1.8 MB), fetched as the tests fetch it (real_model.py)."""
    from support.real_model import smollm2_gguf

    return _gguf_seed("smollm2", smollm2_gguf(), 2 << 20)


def _read_gguf(recipe: tuple[str, tuple[tuple[Any, ...], ...]]) -> Any:
    from bart_score.models.gguf import read_gguf_header

    name, mutations = recipe
    seed = _smollm2_seed() if name == "smollm2" else _tiny_gguf_seeds()[name]
    head, size = mutated(seed, mutations)
    return read_gguf_header(write_file(scratch("fuzz.gguf"), head, size))


register(
    Target(
        name="gguf-header",
        inputs=lambda thorough: _recipes(gguf_seeds(thorough)),
        run=_read_gguf,
        fixed=(("tiny-qwen2", (("shape", 0, ()),)),),  # token_embd.weight without dimensions: an IndexError before
    )
)


# -- safetensors headers ---------------------------------------------------------------------------------------------

_DTYPES = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2", "X", ""]


@functools.cache
def _safetensors_seed() -> bytes:
    import torch
    from safetensors.torch import save

    tensors = {"model.layers.0.mlp.weight": torch.zeros(4, 2), "model.embed_tokens.weight": torch.ones(3, 2)}
    return save(tensors, metadata={"format": "pt"})


def _safetensors_headers() -> st.SearchStrategy[dict[str, Any]]:
    entry = st.fixed_dictionaries(
        {},
        optional={
            "dtype": st.one_of(st.sampled_from(_DTYPES), st.integers()),
            "shape": st.lists(st.one_of(st.integers(-2, 16), st.sampled_from(_EDGES)), max_size=5),
            "data_offsets": st.lists(st.one_of(st.integers(-1, 64), st.sampled_from(_EDGES)), max_size=3),
        },
    )
    names = st.one_of(st.sampled_from(["__metadata__", "a.weight", "layers.0.w"]), st.text(max_size=8))
    return st.dictionaries(names, st.one_of(entry, st.text(max_size=4), st.integers()), max_size=4)


def _safetensors_files() -> st.SearchStrategy[bytes]:
    """A safetensors file: a header of entries (any dtype, shape, offsets) with a length that fits or not, then
    data; or the seed file with bytes changed."""
    generated = st.tuples(
        _safetensors_headers().map(lambda header: json.dumps(header).encode()),
        st.one_of(st.none(), st.sampled_from(_EDGES)),
        st.integers(0, 256),
    ).map(lambda parts: struct.pack("<Q", len(parts[0]) if parts[1] is None else parts[1]) + parts[0] + bytes(parts[2]))
    seed = _safetensors_seed()
    byte = st.tuples(st.integers(0, len(seed) - 1), st.integers(0, 255))
    changed = st.lists(byte, max_size=6).map(lambda edits: _with_bytes(seed, edits))
    return st.one_of(generated, changed, st.binary(max_size=64))


def _with_bytes(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    changed = bytearray(data)
    for position, value in edits:
        changed[position] = value
    return bytes(changed)


def _read_safetensors(data: bytes) -> Any:
    from bart_score.models.checkpoints import Checkpoint, stored_tensor_elements

    folder = scratch("safetensors")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.safetensors"), "wb") as handle:
        handle.write(data)
    return stored_tensor_elements(Checkpoint("fuzz", folder, local=True))


register(Target(name="safetensors-header", inputs=lambda thorough: _safetensors_files(), run=_read_safetensors))


# -- Signature.parse -------------------------------------------------------------------------------------------------

SIGNATURES = (
    "ckpt:facebook/bart-large-cnn|dirs:faithfulness|agg:mean|nrefs:-|prompt:none",
    "ckpt:/srv/a|b|dirs:recall|agg:max|nrefs:1-2|prompt:none|rescale:corpus-89abcdef|version:1.0.0",
    "ckpt:hub:x+bart.pth|dirs:faithfulness+recall|agg:mean|nrefs:1|prompt:custom-321d2aeb(1)@decoder|"
    "rescale:corpus-89abcdef|long:windows(k=3,window=ldfs,retriever=bm25,split=pysbd0.3.4+pieces2000-200)|"
    "policy:mbart:en_XX>de_DE|maxlen:512",
)
_SIGNATURE_PIECES = (
    "ckpt:",
    "|dirs:",
    "|agg:",
    "|nrefs:",
    "|prompt:",
    "|rescale:",
    "|long:",
    "|",
    "-",
    "+",
    "faithfulness",
    "mean",
    "none",
    "0",
    "1",
    "2-1",
    "01",
    "٣",
    "9" * 12,
    "\x00",
    "\n",
    "\u2028",
    "\ud800",
)


def _texts_from(originals: tuple[str, ...], pieces: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Texts made of the pieces of a grammar and any characters, and real texts with pieces put in or taken out."""
    piece = st.one_of(st.sampled_from(pieces), st.text(max_size=6))
    joined = st.lists(piece, max_size=24).map("".join)

    def edited(parts: tuple[str, list[tuple[int, int, str]]]) -> str:
        text, edits = parts
        for at, length, inserted in edits:
            at %= len(text) + 1
            text = text[:at] + inserted + text[at + length :]
        return text

    edits = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 4), piece), max_size=4)
    return st.one_of(joined, st.tuples(st.sampled_from(originals), edits).map(edited))


def _any_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.binary(max_size=16), st.text())

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(st.lists(inner, max_size=3), st.tuples(inner))

    return st.recursive(scalars, containers, max_leaves=5)


def _parse_signature(value: Any) -> Any:
    from bart_score.scoring.signature import Signature

    return Signature.parse(value)


def _check_signature(value: Any, parsed: Any) -> None:
    assert isinstance(value, str) and parsed.format() == value, (value, parsed)
    counts = parsed.reference_counts
    assert counts is None or 1 <= counts[0] <= counts[1], counts


register(
    Target(
        name="signature",
        inputs=lambda thorough: st.one_of(_texts_from(SIGNATURES, _SIGNATURE_PIECES), _any_value()),
        run=_parse_signature,
        check=_check_signature,
        # Found before parse() took any input: a TypeError, int()'s ValueError past 4,300 digits, the fewest over the
        # most.
        fixed=(
            None,
            "ckpt:m|dirs:faithfulness|agg:mean|nrefs:" + "1" * 5000 + "|prompt:none",
            "ckpt:m|dirs:faithfulness|agg:mean|nrefs:2-1|prompt:none",
        ),
    )
)


# -- tables, JSON files and plain texts ------------------------------------------------------------------------------

_CELL_PIECES = (",", '"', '""', "\n", "\r", "\r\n", "\t", "\x00", "\ufeff", "\ud800", " ", "source", "reference",
                "reference_1", "references", "id", "sys", "٣")  # fmt: skip
_RAW_PIECES = (b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\x00", b"\r", b"\n", b'"', b",")


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def file_bytes(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """A file's bytes: a text as UTF-8 (lone surrogates as their bytes, which are not UTF-8), with raw bytes put in."""

    def with_raw(parts: tuple[str, list[tuple[int, bytes]]]) -> bytes:
        data = _encoded(parts[0])
        for at, raw in parts[1]:
            at %= len(data) + 1
            data = data[:at] + raw + data[at:]
        return data

    return st.tuples(texts, st.lists(st.tuples(st.integers(0, 1 << 16), st.sampled_from(_RAW_PIECES)), max_size=3)).map(
        with_raw
    )


def csv_texts() -> st.SearchStrategy[str]:
    cell = st.one_of(st.sampled_from(_CELL_PIECES), st.text(max_size=8))
    cells = st.lists(cell, max_size=3).map("".join)
    rows = st.lists(st.lists(cells, min_size=1, max_size=5), max_size=6)

    def written(parts: tuple[list[list[str]], bool]) -> str:
        import csv
        import io

        table, quoted = parts
        if not quoted:  # raw: cells joined with commas, quotes and line breaks left as they are
            return "".join(",".join(row) + "\n" for row in table)
        out = io.StringIO()
        csv.writer(out).writerows(table)
        return out.getvalue()

    return st.tuples(rows, st.booleans()).map(written)


def _json_values() -> st.SearchStrategy[Any]:
    text = st.one_of(st.sampled_from(["source", "reference", "references", "id", "sys", "\ud800"]), st.text(max_size=8))
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=4))

    return st.recursive(scalars, containers, max_leaves=12)


def _json_texts() -> st.SearchStrategy[str]:
    """JSON texts: values as json.dumps writes them, and texts json.dumps never writes (numbers of thousands of
    digits, NaN, deep nesting, a key twice, a lone surrogate's escape, cut ones)."""
    odd = st.sampled_from(
        [
            "1" * 5000,
            "-1e99999",
            "NaN",
            "[" * 100_000,
            "[" * 70 + "]" * 70,
            '{"a": 1, "a": 2}',
            '"\\ud800"',
            '{"source": "a", "sys": ',
        ]
    )
    dumped = st.tuples(_json_values(), st.booleans()).map(lambda parts: json.dumps(parts[0], ensure_ascii=parts[1]))
    return st.one_of(dumped, odd, st.text(max_size=20))


def jsonl_texts() -> st.SearchStrategy[str]:
    return st.lists(_json_texts(), max_size=5).map(lambda lines: "".join(line + "\n" for line in lines))


def _read_table(kind: str) -> Any:
    def read(data: bytes) -> Any:
        from bart_score.corpora.table_files import TableLimits, read_table_corpus

        path = write_file(scratch(f"fuzz.{kind}"), data, len(data))
        return read_table_corpus(path, limits=TableLimits(max_rows=100, max_columns=50, max_chars=10_000))

    return read


def _read_json(data: bytes) -> Any:
    from bart_score.corpora._reading import read_json

    return read_json(write_file(scratch("fuzz.json"), data, len(data)))


def _read_texts(data: bytes) -> Any:
    from bart_score.corpora.corpus import read_texts

    return read_texts(write_file(scratch("fuzz.txt"), data, len(data)))


register(Target(name="table-csv", inputs=lambda thorough: file_bytes(csv_texts()), run=_read_table("csv")))
register(Target(name="table-jsonl", inputs=lambda thorough: file_bytes(jsonl_texts()), run=_read_table("jsonl")))
register(Target(name="json-file", inputs=lambda thorough: file_bytes(_json_texts()), run=_read_json))
_LINES = st.lists(st.one_of(st.sampled_from(_CELL_PIECES), st.text(max_size=10)), max_size=8).map("".join)
register(Target(name="plain-texts", inputs=lambda thorough: file_bytes(_LINES), run=_read_texts))


# -- the cluster's table reader (bart_score.scaling.cluster), without a cluster
# ----------------------------------------------


def _parquet_tables() -> st.SearchStrategy[bytes]:
    """A Parquet file's bytes: a table of up to 4 rows whose columns (among id, source, reference, sys) hold text,
    whole numbers, lists, structs or nothing, with schema metadata of any size up to past the bound, then bytes of it
    changed, put in or cut."""
    import pyarrow as pa

    values = st.one_of(
        st.none(),
        st.text(max_size=8),
        st.integers(-(1 << 63), (1 << 63) - 1),
        st.lists(st.one_of(st.none(), st.text(max_size=4)), max_size=2),
        st.fixed_dictionaries({"text": st.text(max_size=4)}),
    )
    columns = st.dictionaries(st.sampled_from(["id", "source", "reference", "sys", "٣"]), values, min_size=1)
    metadata = st.sampled_from([0, 10, (1 << 20) + 1])
    edits = st.lists(
        st.tuples(st.integers(0, 1 << 16), st.sampled_from(["set", "insert", "cut"]), st.binary(min_size=1, max_size=4))
    )

    def written(parts: tuple[dict[str, Any], int, int, list[tuple[int, str, bytes]]]) -> bytes:
        import io

        import pyarrow.parquet as pq

        row, rows, padding, changes = parts
        try:
            table = pa.Table.from_pylist([row] * rows)
        except (pa.ArrowException, OverflowError):
            table = pa.table({"id": ["a"] * rows})
        if padding:
            table = table.replace_schema_metadata({b"padding": b"x" * padding})
        out = io.BytesIO()
        pq.write_table(table, out)
        data = out.getvalue()
        for at, how, raw in changes:
            at %= len(data) + 1
            if how == "set":
                data = data[:at] + raw + data[at + len(raw) :]
            elif how == "insert":
                data = data[:at] + raw + data[at:]
            else:
                data = data[:at] + data[at + len(raw) :]
        return data

    return st.tuples(columns, st.integers(0, 4), metadata, edits.map(lambda e: e[:3])).map(written)


def _read_cluster_table(kind: str) -> Any:
    """The cluster's reading of a table file before any cluster is reached: its columns' roles, types and texts, and
    its ids (bart_score.scaling.cluster._checked_input), with max_chars at 10,000."""

    def read(data: bytes) -> Any:
        from bart_score.options import ClusterOptions, EngineOptions, ScoringOptions
        from bart_score.scaling._cluster_input import _Input
        from bart_score.scaling.cluster import _checked_input, _Request

        path = write_file(scratch(f"fuzz-cluster.{kind}"), data, len(data))
        roles = (None, None, None)
        request = _Request("id", roles, EngineOptions(), ScoringOptions(max_chars=10_000), ClusterOptions())
        return _checked_input(_Input(None, (f".{kind}", [path], [path])), request)

    return read


# Each format's inputs, and what the fuzzing found: a first line of null crashed pyarrow 26's JSON reader (SIGSEGV),
# and a CSV header that is not UTF-8 was a UnicodeDecodeError.
_CLUSTER_INPUTS = {
    "jsonl": (lambda thorough: file_bytes(jsonl_texts()), (b"null\n", b" \n\tnull\n{}\n")),
    "csv": (lambda thorough: file_bytes(csv_texts()), (b"\xff\n",)),
    "parquet": (lambda thorough: _parquet_tables(), ()),
}
for _kind, (_inputs, _fixed) in _CLUSTER_INPUTS.items():
    register(Target(name=f"cluster-{_kind}", inputs=_inputs, run=_read_cluster_table(_kind), fixed=_fixed))


# -- convert's marker (bart_score.models.conversion) -----------------------------------------------------------------

# The folder a marker is read in: one file a conversion wrote, config.json, beside bartscore-convert.json.
_CONVERTED_FILE = b'{"model_type": "llama"}\n'
_CONVERTED_ENTRY = {"size": len(_CONVERTED_FILE), "sha256": hashlib.sha256(_CONVERTED_FILE).hexdigest()}


def _marker_texts() -> st.SearchStrategy[str]:
    """A marker as convert writes it, with its entries' names, sizes and digests made odd (paths, the marker itself,
    NULs, long names, numbers of other types, digests of other forms), or any JSON text."""
    names = st.one_of(
        st.sampled_from(["config.json", "notes.txt", "", ".", "..", "../config.json", "a/b", "bartscore-convert.json"]),
        st.sampled_from(["x\x00", "é" * 300, "config.json "]),
        st.text(max_size=8),
    )
    sizes = st.one_of(st.just(_CONVERTED_ENTRY["size"]), st.sampled_from([-1, 1 << 70, 23.0, True, "23", None]))
    digests = st.one_of(
        st.just(_CONVERTED_ENTRY["sha256"]),
        st.just(_CONVERTED_ENTRY["sha256"].upper()),
        st.text(alphabet="0123456789abcdef", min_size=63, max_size=65),
        st.sampled_from([None, 0, []]),
    )
    entries = st.one_of(st.fixed_dictionaries({"size": sizes, "sha256": digests}), st.sampled_from([None, [], "x"]))
    files = st.dictionaries(names, entries, max_size=4)
    formats = st.sampled_from(["bartscore-convert", "bartscore-convert ", None])
    markers = st.tuples(formats, files).map(lambda parts: json.dumps({"format": parts[0], "files": parts[1]}))
    return st.one_of(markers, _json_texts())


def _read_marker(data: bytes) -> Any:
    from bart_score.models.conversion import CONVERTED_MARKER, _not_a_conversion

    folder = scratch("converted")
    shutil.rmtree(folder, ignore_errors=True)
    os.mkdir(folder)
    write_file(os.path.join(folder, "config.json"), _CONVERTED_FILE, len(_CONVERTED_FILE))
    write_file(os.path.join(folder, CONVERTED_MARKER), data, len(data))
    return _not_a_conversion(folder)


def _replaced_only_as_written(data: bytes, problem: Any) -> None:
    """A folder is taken for a conversion's (no problem) only when its marker, read as plain JSON, lists config.json
    with its size and digest, in convert's format."""
    if problem is None:
        marker = json.loads(data.decode("utf-8-sig"))
        assert marker["format"] == "bartscore-convert" and marker["files"]["config.json"] == _CONVERTED_ENTRY, marker
    else:
        assert isinstance(problem, str) and "\n" not in problem


register(
    Target(
        name="convert-marker",
        inputs=lambda thorough: file_bytes(_marker_texts()),
        run=_read_marker,
        check=_replaced_only_as_written,
        steered=False,  # each input's seconds are a few file writes, which steering cannot move (bench/README.md)
    )
)
