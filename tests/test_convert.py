"""`bartscore convert` and convert_gguf: a GGUF file written as a plain transformers folder that scores exactly as the
file (plain and chat scoring, tiny models written here and the real SmolLM2 file), with its chat template (the file's
or one beside it); a folder that is not one of convert's outputs is never written into, and an interrupted conversion
leaves nothing under the folder's name."""

import copy
import json
import os
import pathlib

import pytest
from support.extras import require_extra

require_extra("gguf")  # before the imports that need it
import torch
import transformers
from support.gguf import CHAT_TEMPLATE, build_tiny_causal, write_gguf

import bart_score
from bart_score.cli import main
from bart_score.errors import CheckpointLoadError, InputError
from bart_score.models.conversion import CONVERTED_MARKER, convert_gguf

CONDITIONS = ["The cat sat on the mat all afternoon.", "Rain is expected in the north tomorrow, the service said."]
TARGETS = ["A cat sat on a mat.", "It will rain in the north."]
FOLDER_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"}


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    model, tokenizer = build_tiny_causal("qwen2", seed=7)
    return write_gguf(model, tokenizer, tmp_path_factory.mktemp("convert") / "tiny.gguf")


@pytest.fixture(scope="module")
def converted(tiny_gguf, tmp_path_factory):
    folder = tmp_path_factory.mktemp("converted") / "tiny"
    written = convert_gguf(tiny_gguf, str(folder))
    return str(folder), written


def test_the_folder_scores_exactly_as_the_gguf_file(tiny_gguf, converted):
    folder, written = converted
    assert FOLDER_FILES | {CONVERTED_MARKER} <= set(written) == set(os.listdir(folder))
    for options in ({}, {"chat": True}):
        from_gguf = bart_score.BARTScorer(checkpoint=tiny_gguf, device="cpu", **options)
        from_folder = bart_score.BARTScorer(checkpoint=folder, device="cpu", **options)
        assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS), options
        assert from_folder.token_policy == from_gguf.token_policy
    mask = os.umask(0)
    os.umask(mask)
    assert {os.stat(os.path.join(folder, name)).st_mode & 0o777 for name in written} == {0o666 & ~mask}
    config = json.loads(pathlib.Path(folder, "config.json").read_text(encoding="utf-8"))
    assert "quantization_config" not in config
    marker = json.loads(pathlib.Path(folder, CONVERTED_MARKER).read_text(encoding="utf-8"))
    assert marker["source"] == os.path.realpath(tiny_gguf) and marker["chat_template"] == "GGUF metadata"


def test_the_folder_is_a_plain_checkpoint_transformers_reads_alone(converted, tiny_gguf):
    folder, _ = converted
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=False)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    assert getattr(model.config, "quantization_config", None) is None
    assert {parameter.dtype for parameter in model.parameters()} == {torch.float32}
    assert tokenizer.chat_template == CHAT_TEMPLATE


def test_a_chat_template_beside_a_base_models_file_goes_into_the_folder(tmp_path):
    model, tokenizer = build_tiny_causal("llama", seed=8)
    base = copy.deepcopy(tokenizer)
    base.chat_template = None
    (tmp_path / "base").mkdir()
    gguf = write_gguf(model, base, tmp_path / "base" / "model.gguf")
    (tmp_path / "base" / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    convert_gguf(gguf, str(tmp_path / "out"))
    assert (tmp_path / "out" / "chat_template.jinja").read_text(encoding="utf-8") == CHAT_TEMPLATE
    assert json.loads((tmp_path / "out" / CONVERTED_MARKER).read_text())["chat_template"] == "chat_template.jinja"
    from_gguf = bart_score.BARTScorer(checkpoint=gguf, device="cpu", chat=True)
    from_folder = bart_score.BARTScorer(checkpoint=str(tmp_path / "out"), device="cpu", chat=True)
    assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS)


def test_a_folder_that_is_not_a_conversion_is_never_written_into(tiny_gguf, tmp_path, no_model_load):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds 1 file\(s\) that a conversion did not write") as raised:
        convert_gguf(tiny_gguf, str(mine))
    assert raised.value.option == "folder"
    assert os.listdir(mine) == ["notes.txt"] and os.listdir(tmp_path) == ["mine"]
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"is not a folder"):
        convert_gguf(tiny_gguf, str(a_file))
    with pytest.raises(InputError, match=r"is not a GGUF file") as raised:
        convert_gguf(str(a_file), str(tmp_path / "out"))
    assert raised.value.option == "gguf"
    not_gguf = tmp_path / "fake.gguf"
    not_gguf.write_bytes(b"not gguf at all")
    with pytest.raises(CheckpointLoadError, match=r"is not a GGUF file \(it does not start with the GGUF magic"):
        convert_gguf(str(not_gguf), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_an_empty_folder_or_an_earlier_conversion_is_replaced(tiny_gguf, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    convert_gguf(tiny_gguf, str(empty))
    assert set(os.listdir(empty)) >= FOLDER_FILES
    (empty / "left-over.txt").write_text("from before", encoding="utf-8")
    convert_gguf(tiny_gguf, str(empty))
    assert "left-over.txt" not in os.listdir(empty) and set(os.listdir(empty)) >= FOLDER_FILES
    assert sorted(os.listdir(tmp_path)) == ["empty"]  # nothing left beside it


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError(28, "No space left on device")], ids=["ctrl-c", "disk"])
def test_an_interrupted_conversion_leaves_nothing_under_the_folders_name(tiny_gguf, tmp_path, monkeypatch, stop):
    """Stopped while the tokenizer is written, after the weights: the folder is not there, nor anything beside it."""
    seen = []

    def interrupted(self, folder, *args, **kwargs):
        seen.append(sorted(os.listdir(folder)))
        assert not (tmp_path / "out").exists()  # written elsewhere until it is complete
        raise stop

    monkeypatch.setattr(transformers.PreTrainedTokenizerBase, "save_pretrained", interrupted)
    with pytest.raises(type(stop) if isinstance(stop, BaseException) else stop):
        convert_gguf(tiny_gguf, str(tmp_path / "out"))
    assert "model.safetensors" in seen[0]
    assert os.listdir(tmp_path) == []


def test_the_command_line_converts_and_refuses_with_its_arguments_names(tiny_gguf, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "convert" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    assert "MODEL.gguf DIR" in capsys.readouterr().out
    assert main(["convert", "-q", tiny_gguf, str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"converted {os.path.realpath(tiny_gguf)} to {tmp_path / 'out'}: ") and said.err == ""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["convert", tiny_gguf, str(tmp_path / "mine")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"bartscore convert: error: DIR {tmp_path / 'mine'} holds 1 file(s) that a conversion")
    assert main(["convert", str(tmp_path / "mine" / "notes.txt"), str(tmp_path / "x")]) == 2
    assert "error: MODEL.gguf " in capsys.readouterr().err


@pytest.mark.slow
def test_the_real_smollm2_folder_is_convert_gguf_s_and_scores_as_its_file(smollm2_gguf, smollm2_folder):
    """The tests' plain SmolLM2 folder is this command's output (support/real_model.py), and scores as the file."""
    marker = json.loads(pathlib.Path(smollm2_folder, CONVERTED_MARKER).read_text(encoding="utf-8"))
    assert marker["source"] == os.path.realpath(smollm2_gguf)
    from_gguf = bart_score.BARTScorer(checkpoint=smollm2_gguf, device="cpu", chat=True)
    from_folder = bart_score.BARTScorer(checkpoint=smollm2_folder, device="cpu", chat=True)
    assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS)


def test_a_folder_filled_while_the_file_is_converted_is_not_replaced(tiny_gguf, tmp_path, monkeypatch):
    from bart_score.models import conversion

    target = tmp_path / "out"
    write = conversion._write

    def meanwhile(gguf, folder):
        write(gguf, folder)
        target.mkdir()
        (target / "notes.txt").write_text("written meanwhile", encoding="utf-8")

    monkeypatch.setattr(conversion, "_write", meanwhile)
    with pytest.raises(InputError, match=r"holds 1 file\(s\) that a conversion did not write"):
        convert_gguf(tiny_gguf, str(target))
    assert os.listdir(target) == ["notes.txt"] and os.listdir(tmp_path) == ["out"]
