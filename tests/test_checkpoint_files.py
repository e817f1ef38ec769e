"""A checkpoint folder's own files. A config or tokenizer file that transformers would read without end (a link to
/dev/zero, a pipe) or that is far over any real size, and a tokenizer whose vocabulary files are missing (from which
transformers quietly builds a tokenizer that reads every text as unknown or no tokens), are refused with a
CheckpointLoadError naming the file or the tokenizer, before anything is scored."""

import json
import os
import shutil

import pytest
from support.cli import run_cli_capped
from support.models import FAMILIES, build_sentence_encoder, tiny_checkpoint_for

import bart_score
from bart_score.long_documents.retrievers import EmbeddingRetriever
from bart_score.messages import FileName
from bart_score.models.loading import checkpoint_identity

TOKENIZER_CONFIGS = ("config.json", "tokenizer_config.json", "generation_config.json")


@pytest.fixture
def copy_of(tmp_path_factory, tmp_path):
    """A fresh copy of the tiny checkpoint of a family, to damage."""

    def copy(family):
        target = tmp_path / family
        shutil.copytree(tiny_checkpoint_for(tmp_path_factory, family), target)
        return target

    return copy


def replace(path, defect):
    os.remove(path)
    if defect == "a link to /dev/zero":
        os.symlink("/dev/zero", path)
    elif defect == "a pipe":
        os.mkfifo(path)
    else:
        os.symlink(path.parent / "not-there.json", path)


def refused(folder, match):
    """Both ways a checkpoint's files are read: its identity (a score cache and a baseline are checked before the
    model loads) and loading it."""
    with pytest.raises(bart_score.CheckpointLoadError, match=match):
        checkpoint_identity(str(folder))
    with pytest.raises(bart_score.CheckpointLoadError, match=match) as raised:
        bart_score.BARTScorer(checkpoint=str(folder), device="cpu")
    assert FileName(str(folder)) in raised.value.parts  # the checkpoint, which the Space does not show


@pytest.mark.parametrize("defect", ["a link to /dev/zero", "a pipe", "a link to nothing"])
@pytest.mark.parametrize(
    ("family", "name"),
    [
        ("bart", "config.json"),
        ("bart", "tokenizer.json"),
        ("bart", "tokenizer_config.json"),
        ("marian", "source.spm"),
        ("marian", "vocab.json"),
    ],
)
def test_a_config_or_tokenizer_file_that_is_not_a_regular_file_is_named(copy_of, family, name, defect):
    folder = copy_of(family)
    replace(folder / name, defect)
    kind = "is a link to a file that is not there" if defect == "a link to nothing" else "is not a regular file"
    refused(folder, rf"^{name} of the checkpoint '.*' {kind}")


@pytest.mark.parametrize(("name", "limit"), [("config.json", "64 MiB"), ("tokenizer_config.json", "64 MiB")])
def test_a_config_far_over_any_real_size_is_refused_before_it_is_read(copy_of, name, limit):
    folder = copy_of("bart")
    with open(folder / name, "r+b") as handle:
        handle.truncate(65 << 20)  # sparse: no disk, but 65 MiB to whoever reads it
    refused(folder, rf"^{name} of the checkpoint '.*' is 68,157,440 bytes, over the limit of {limit}")


def test_a_vocabulary_over_a_gib_is_refused_before_it_is_read(copy_of):
    folder = copy_of("bart")
    with open(folder / "tokenizer.json", "r+b") as handle:
        handle.truncate((1 << 30) + 1)
    refused(folder, r"^tokenizer.json of the checkpoint '.*' is 1,073,741,825 bytes, over the limit of 1 GiB")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tokenizer_without_its_vocabulary_files_is_refused_in_every_family(copy_of, family):
    folder = copy_of(family)
    for name in os.listdir(folder):
        if name not in TOKENIZER_CONFIGS and not name.endswith(".safetensors"):
            os.remove(folder / name)
    assert sorted(os.listdir(folder))[0] == "config.json"  # weights and configs stay: only the vocabulary is gone
    with pytest.raises(bart_score.CheckpointLoadError) as refusal:
        bart_score.BARTScorer(checkpoint=str(folder), device="cpu")
    # Most families build a tokenizer without a vocabulary; PEGASUS and Marian fail to build one at all.
    assert str(refusal.value).startswith(
        (f"the tokenizer of '{folder}' has ", f"cannot load the tokenizer of '{folder}': ")
    ), refusal.value


@pytest.mark.slow
def test_a_sub_folder_named_like_a_tokenizer_file_is_neither_read_nor_part_of_the_identity(copy_of):
    folder = copy_of("bart")
    before = checkpoint_identity(str(folder))
    os.mkdir(folder / "tokenizer")  # as a diffusion pipeline's folder holds one
    assert checkpoint_identity(str(folder)) == before
    assert bart_score.BARTScorer(checkpoint=str(folder), device="cpu").score(["A cat."], ["A cat."])[0] < 0


def test_a_retrievers_tokenizer_without_its_vocabulary_is_refused(tmp_path):
    folder = build_sentence_encoder(tmp_path / "encoder")
    for name in os.listdir(folder):
        if name.startswith(("tokenizer.json", "vocab")):
            os.remove(os.path.join(folder, name))
    with pytest.raises(bart_score.CheckpointLoadError, match=rf"^the tokenizer of the retriever '{folder}' has "):
        EmbeddingRetriever(folder)


# -- a config that asks for more than the weights hold ------------------------------------------------------------

LAYER_COUNTS = ("num_hidden_layers", "num_layers", "encoder_layers", "decoder_layers", "num_decoder_layers", "n_layer")


def edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))
    return config


@pytest.mark.parametrize("family", FAMILIES)
def test_a_config_of_more_layers_than_the_weights_hold_is_refused_before_the_model_is_built(
    family, copy_of, no_model_load
):
    folder = copy_of(family)
    config = json.loads((folder / "config.json").read_text())
    for attribute in [name for name in LAYER_COUNTS if name in config]:
        # A config that lists each layer's kind (Qwen2's layer_types) lists 20,000, as a consistent forgery would.
        kinds = {"layer_types": config["layer_types"][:1] * 20_000} if "layer_types" in config else {}
        edit_config(folder, **{attribute: 20_000}, **kinds)
        message = r"is damaged: its config's \w+ is 20,000, but its weights hold \d+ numbered layers"
        with pytest.raises(bart_score.CheckpointLoadError, match=message):
            bart_score.BARTScorer(checkpoint=str(folder), device="cpu")
        edit_config(folder, **{attribute: config[attribute]}, **{key: config[key] for key in kinds})


# The sizes of a config that shape its weights, across the families (each family's config has some of them).
SIZES = ("vocab_size", "hidden_size", "d_model", "n_embd", "intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim")


@pytest.mark.parametrize("family", FAMILIES)
def test_a_config_whose_sizes_exceed_the_weights_is_refused_before_the_model_is_built(family, copy_of, no_model_load):
    folder = copy_of(family)
    config = json.loads((folder / "config.json").read_text())
    sizes = [name for name in SIZES if isinstance(config.get(name), int)]
    assert "vocab_size" in sizes and len(sizes) >= 2, sizes  # the vocabulary and a width at least
    message = r"the \w+ its config describes has [\d,]+ parameters, but its weights hold [\d,]+ values"
    for size in sizes:
        edit_config(folder, **{size: config[size] * 64})
        with pytest.raises(bart_score.CheckpointLoadError, match=message):
            bart_score.BARTScorer(checkpoint=str(folder), device="cpu")
        edit_config(folder, **{size: config[size]})


def test_a_config_that_transformers_finds_inconsistent_is_a_checkpoint_load_error(copy_of):
    folder = copy_of("qwen2")
    edit_config(folder, num_hidden_layers=20_000)  # its layer_types still lists 2
    message = r"cannot read the config of '.*qwen2': `num_hidden_layers` \(20000\) must be equal to the number of"
    with pytest.raises(bart_score.CheckpointLoadError, match=message):
        bart_score.BARTScorer(checkpoint=str(folder), device="cpu")


@pytest.mark.slow
def test_the_config_of_20000_layers_is_refused_by_the_command_line_in_bounded_memory(copy_of, tmp_path):
    folder = copy_of("llama")
    edit_config(folder, num_hidden_layers=20_000)
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    arguments = ["score", "-m", str(folder), "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "src.txt"), "-q"]
    status, error, _, peak = run_cli_capped(*arguments, memory=3 << 30, seconds=120)
    assert status == 1 and "its config's num_hidden_layers is 20,000, but its weights hold 2" in error, error
    assert len(error.strip().splitlines()) == 1 and str(folder) in error
    assert peak < 1 << 30, f"{peak:,} bytes resident"
