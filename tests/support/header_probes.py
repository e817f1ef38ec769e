"""Checkpoints whose headers ask for more in all than any real one, while each item is within its own bound: the
probes of the bounds in all (bart_score/models/gguf.py, and the layer count of models/loading.py). Each GGUF probe is
written from a tiny model as support/gguf.py writes one, `probe(model, tokenizer, path)`, as the tests' damaged files
are, so that the tests (test_gguf.py, test_hostile_inputs.py) and bench/bench_checkpoint_bombs.py build the same
files."""

from __future__ import annotations

import json
import pathlib
import shutil
import struct

from support.gguf import add_raw_metadata, gguf, string_array, write_gguf


def metadata_keys_probe(model, tokenizer, path, count: int = 65_536) -> str:
    """The model's file with `count` metadata keys in all (its own and unused ones): 65,536 loaded after 130 s."""

    def add_keys(writer):
        for index in range(count - len(writer.kv_data[0])):
            writer.add_uint32(f"general.unused.{index}", index)

    return write_gguf(model, tokenizer, path, edit=add_keys)


def padded_merges_probe(model, tokenizer, path, elements: int = 1 << 20) -> str:
    """The model's file whose merges are followed by empty strings, up to `elements` array elements in all (the
    tokens and their types are the others): a million took 60 s and 2 GB before transformers failed on it."""
    merges = []

    def take_merges(writer):
        merges.extend(writer.kv_data[0].pop(gguf.Keys.Tokenizer.MERGES).value)

    write_gguf(model, tokenizer, path, edit=take_merges)
    padding = elements - 2 * len(tokenizer) - len(merges)
    merges_array = string_array([*merges, *[""] * padding])
    add_raw_metadata(path, gguf.Keys.Tokenizer.MERGES, gguf.GGUFValueType.ARRAY, merges_array)
    return str(path)


def string_bytes_probe(model, tokenizer, path, count: int = 17, length: int = 1 << 20) -> str:
    """The model's file with an unused array of `count` strings of `length` bytes (17 MiB: each string within its
    bound of 1 MiB, all of them over 16 MiB)."""
    write_gguf(model, tokenizer, path)
    add_raw_metadata(path, "general.unused", gguf.GGUFValueType.ARRAY, string_array(["x" * length] * count))
    return str(path)


def embedding_without_dimensions_probe(model, tokenizer, path) -> str:
    """The model's file whose token_embd.weight has no dimensions: its entry in the table without its shape, and 16
    bytes more at the end, so that its tensors still end within the file (an IndexError in the reader of before)."""
    write_gguf(model, tokenizer, path)
    data = pathlib.Path(path).read_bytes()
    entry = b"token_embd.weight" + struct.pack("<I", 2)
    at = data.index(entry) + len(entry)
    pathlib.Path(path).write_bytes(data[: at - 4] + struct.pack("<I", 0) + data[at + 16 :] + bytes(16))
    return str(path)


def padded_layers_probe(folder, target, layers: int = 20_000, name: str = "pad.{}") -> str:
    """A copy of the checkpoint `folder` at `target` whose config says `layers` layers, beside an extra weights file
    of `layers` one-value tensors named pad.0, pad.1, ...: numbers that are no layer's (83 to 98 s and 1.1 GB to be
    refused, when any number in any name counted as a layer). `name` places the number elsewhere: model.layers.{}.pad
    puts it where a layer's number stands."""
    target = pathlib.Path(target)
    shutil.copytree(folder, target)
    config = json.loads((target / "config.json").read_text(encoding="utf-8"))
    (target / "config.json").write_text(json.dumps({**config, "num_hidden_layers": layers}), encoding="utf-8")
    write_zeros_safetensors(target / "pad.safetensors", [name.format(index) for index in range(layers)])
    return str(target)


def write_zeros_safetensors(path: pathlib.Path, names: list[str]) -> None:
    """A safetensors file of one float32 zero for each of `names`, laid out as the format says (the header's length,
    the JSON header padded with spaces to 8 bytes, then the data): safetensors' save_file takes most of a second to
    write 20,000 such tensors."""
    header = {name: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i, name in enumerate(names)}
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + bytes(4 * len(names)))
