"""No code from a checkpoint ever runs, and a model that cannot score is told apart from one whose weights are bad.

Every checkpoint here that asks for code of its own carries a Python file that, once imported, writes a marker file:
the marker must never appear, whether the checkpoint is a folder, a cached Hub snapshot or a GGUF file's folder,
loaded by the library or the command line, and even with "y" waiting on stdin for a prompt that must not come."""

import ast
import io
import json
import math
import os
import re
import runpy
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
from support.cli import ROOT
from support.fast_subset import fast_cases
from support.gguf import build_tiny_causal, save_folder, write_gguf
from support.models import build_gemma2_softcapped
from support.reference import causal_score

import bart_score
import space.guards
import space.settings
from bart_score.cli import main
from bart_score.messages import Mention

CUSTOM_CODE = "needs its own Python code"
NEVER_RUN = "bartscore never runs code from a checkpoint"


def probe_module(folder, module, marker):
    """A module in the checkpoint whose import writes `marker`, with the classes an auto_map may name."""
    (folder / f"{module}.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('the checkpoint code ran')\n"
        "class ProbeConfig: pass\nclass ProbeModel: pass\nclass ProbeTokenizer: pass\n",
        encoding="utf-8",
    )


def rewrite_json(path, **update):
    content = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    path.write_text(json.dumps({**content, **update}), encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_llama_folder(tmp_path_factory):
    model, tokenizer = build_tiny_causal("llama", seed=5)
    return save_folder(model, tokenizer, tmp_path_factory.mktemp("llama") / "plain")


def custom_code_checkpoint(kind, base, folder, marker):
    """A checkpoint folder of `kind` that would need its own code. Returns (folder, expected message)."""
    if kind == "unknown type with an auto_map":
        folder.mkdir(parents=True)
        probe_module(folder, "configuration_probe", marker)
        probe_module(folder, "modeling_probe", marker)
        rewrite_json(
            folder / "config.json",
            model_type="bartscore-probe",
            auto_map={"AutoConfig": "configuration_probe.ProbeConfig", "AutoModelForCausalLM": "modeling_probe.Probe"},
        )
        return folder, rf"{CUSTOM_CODE}: its config names classes of the checkpoint's own \(configuration_probe"
    shutil.copytree(base, folder)
    if kind == "known type with an auto_map":
        probe_module(folder, "modeling_probe", marker)
        rewrite_json(folder / "config.json", auto_map={"AutoModelForCausalLM": "modeling_probe.ProbeModel"})
        return folder, rf"{CUSTOM_CODE}: its config names classes of the checkpoint's own \(modeling_probe.ProbeModel"
    if kind == "tokenizer with an auto_map":
        probe_module(folder, "tokenization_probe", marker)
        rewrite_json(
            folder / "tokenizer_config.json",
            tokenizer_class="ProbeTokenizer",
            auto_map={"AutoTokenizer": ["tokenization_probe.ProbeTokenizer", None]},
        )
        return folder, rf"{CUSTOM_CODE}: its tokenizer config names classes of the checkpoint's own"
    assert kind == "unknown type without an auto_map"
    rewrite_json(folder / "config.json", model_type="bartscore-probe")
    return folder, r"is a 'bartscore-probe' model, which transformers .* does not know: loading it would need its own"


KINDS = [
    "unknown type with an auto_map",
    "known type with an auto_map",
    "tokenizer with an auto_map",
    "unknown type without an auto_map",
]


def test_the_probe_writes_its_marker_when_imported(tmp_path):
    """The marker's absence below means something: importing the probe module does write it."""
    marker = tmp_path / "ran"
    probe_module(tmp_path, "modeling_probe", marker)
    runpy.run_path(str(tmp_path / "modeling_probe.py"))
    assert marker.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpoint_that_needs_its_own_code_is_refused_without_running_it(
    kind, tiny_llama_folder, tmp_path, monkeypatch
):
    marker = tmp_path / "ran"
    folder, message = custom_code_checkpoint(kind, tiny_llama_folder, tmp_path / "custom", marker)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n" * 5))  # what a prompt would read, if one came
    with pytest.raises(bart_score.CustomCodeError, match=message) as raised:
        bart_score.BARTScorer(checkpoint=str(folder), device="cpu")
    assert "never runs" in str(raised.value)
    assert isinstance(raised.value, bart_score.UnsupportedModelError)
    assert sys.stdin.read() == "y\n" * 5  # nothing asked
    assert not marker.exists()


def test_a_cached_hub_snapshot_that_needs_its_own_code_is_refused_without_running_it(
    empty_hf_cache, tmp_path, monkeypatch
):
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = empty_hf_cache / "models--someone--custom-model"
    marker = tmp_path / "ran"
    folder, message = custom_code_checkpoint("unknown type with an auto_map", None, repo / "snapshots" / commit, marker)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    with pytest.raises(bart_score.CustomCodeError, match=message):
        bart_score.BARTScorer(checkpoint="someone/custom-model", device="cpu")
    assert not marker.exists() and folder.is_dir()


@pytest.mark.slow
def test_a_tokenizer_config_beside_a_gguf_file_that_names_its_own_code_is_not_read(tmp_path):
    """A GGUF file's tokenizer is its metadata's: transformers never sees a tokenizer config beside it."""
    marker = tmp_path / "ran"
    model, tokenizer = build_tiny_causal("llama", seed=6)
    write_gguf(model, tokenizer, tmp_path / "model.gguf")
    probe_module(tmp_path, "tokenization_probe", marker)
    tokenizer.save_pretrained(tmp_path)
    rewrite_json(tmp_path / "tokenizer_config.json", auto_map={"AutoTokenizer": ["tokenization_probe.Probe", None]})
    scorer = bart_score.BARTScorer(checkpoint=str(tmp_path / "model.gguf"), device="cpu")
    assert type(scorer.tokenizer).__name__ != "ProbeTokenizer"
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_cli_refuses_a_checkpoint_that_needs_its_own_code_with_y_piped_in(kind, tiny_llama_folder, tmp_path):
    marker = tmp_path / "ran"
    folder, message = custom_code_checkpoint(kind, tiny_llama_folder, tmp_path / "custom", marker)
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A cat sat.\n", encoding="utf-8")
    inputs = ["-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt")]
    completed = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bartscore.py"), "score", "-m", str(folder), "-q", *inputs],
        input="y\n",
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=120,
    )
    assert completed.returncode == 2, completed.stderr
    assert f"bartscore score: error: {folder}" in completed.stderr and "never runs" in completed.stderr
    assert re.search(message, completed.stderr), completed.stderr
    assert "Traceback" not in completed.stderr and "[y/N]" not in completed.stdout + completed.stderr
    assert not marker.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_the_space_says_a_menu_model_needs_custom_code_that_is_never_run(kind, tiny_llama_folder, tmp_path):
    marker = tmp_path / "ran"
    folder, message = custom_code_checkpoint(kind, tiny_llama_folder, tmp_path / "custom", marker)
    problems = space.guards.model_problems({"custom": str(folder)})
    if "custom" in problems:  # found when the app starts (the model's config), else when it is chosen
        assert re.search(message, problems["custom"]) and "never runs" in problems["custom"]
        assert "damaged" not in problems["custom"]
    settings = space.settings.settings_from_env({"BARTSCORE_APP_MODELS": f"custom={folder}"})
    with pytest.raises(ValueError) as raised:
        space.settings.menu_scorer(settings, "custom")
    assert str(raised.value) == (
        "The model 'custom' cannot be loaded: it needs its own Python code (custom code in its files), which this "
        "server never runs"
    )
    assert "damaged" not in str(raised.value) and not marker.exists()


def _from_pretrained_calls(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if "from_pretrained" not in text and "from_config" not in text:  # no call to find: not parsed (most files)
        return
    for node in ast.walk(ast.parse(text, filename=path)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("from_pretrained", "from_config"):
            yield node


@pytest.mark.slow
def test_every_from_pretrained_call_in_the_project_says_trust_remote_code_false():
    """transformers asks on stdin, and runs the code on "y", when trust_remote_code is left out and a checkpoint
    brings code: every call in the library, the Space, the benchmarks and the tests says False, literally."""
    unsafe, seen = [], 0
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name != "__pycache__"]
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            for call in _from_pretrained_calls(path):
                seen += 1
                flags = [k.value for k in call.keywords if k.arg == "trust_remote_code"]
                if not (len(flags) == 1 and isinstance(flags[0], ast.Constant) and flags[0].value is False):
                    unsafe.append(f"{os.path.relpath(path, ROOT)}:{call.lineno}")
    assert seen > 10  # the walk found the project's calls
    assert not unsafe, f"from_pretrained/from_config without trust_remote_code=False: {unsafe}"


# -- weights that are not numbers, and architectures the engine cannot drive ---------------------------------------


def damaged_copy(source, target, value):
    """A copy of the checkpoint folder `source` with one weight of its first layer set to `value` (NaN or inf)."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    shutil.copytree(source, target)
    config = json.loads((target / "config.json").read_text())
    auto = AutoModelForSeq2SeqLM if config.get("is_encoder_decoder") else AutoModelForCausalLM
    model = auto.from_pretrained(target, trust_remote_code=False)
    name, parameter = next((n, p) for n, p in model.named_parameters() if p.dim() == 2 and "layers.0" in n)
    with torch.no_grad():
        parameter[0, 0] = value
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source, trust_remote_code=False).save_pretrained(target)
    return name


@pytest.mark.parametrize(
    "value", [float("nan"), pytest.param(float("inf"), marks=pytest.mark.slow)], ids=["nan", "inf"]
)
@pytest.mark.parametrize("family", fast_cases(["bart", "llama"], ["llama"]))
def test_weights_that_are_not_numbers_are_named_as_a_damaged_checkpoint(
    family, value, tiny_checkpoint, tiny_llama_folder, tmp_path
):
    source = tiny_checkpoint if family == "bart" else tiny_llama_folder
    name = damaged_copy(source, tmp_path / "damaged", value)
    message = (
        rf"the weights of '.*damaged' give non-finite log-probabilities \(NaN/inf\): {name} holds NaN or inf values, "
        r"so the checkpoint is damaged"
    )
    with pytest.raises(bart_score.CheckpointLoadError, match=message):
        bart_score.BARTScorer(checkpoint=str(tmp_path / "damaged"), device="cpu")
    healthy = bart_score.BARTScorer(checkpoint=str(source), device="cpu")  # the undamaged model loads and scores
    assert np.isfinite(healthy.score(["The cat sat."], ["A cat."])[0])


@pytest.mark.parametrize(
    "scale, dtype, error, message",
    [
        pytest.param(
            3e38,
            "float32",
            bart_score.CheckpointLoadError,
            r"give non-finite log-probabilities \(NaN/inf\): the checkp",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            3e4,
            "float16",
            bart_score.InputError,
            r"in float16, although its weights are finite: its values overflow",
            marks=pytest.mark.slow,
        ),
        # large, finite in float32: rounding is not taken for a foreign architecture
        pytest.param(3e4, "float32", None, None, marks=pytest.mark.slow),
        # Weights beyond float16's range (65,504) are infinite once loaded in it: the dtype's doing, not damage. The
        # fast subset's case (tests/README.md).
        (1e5, "float16", bart_score.InputError, r"are finite, but lm_head.weight holds values beyond the range of flo"),
        pytest.param(
            1e5,
            "gguf-float16",
            bart_score.InputError,
            r"are finite, but lm_head.weight holds values beyond the range of",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            float("inf"),
            "float16",
            bart_score.CheckpointLoadError,
            r"lm_head.weight holds NaN or inf values, so the che",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            float("inf"),
            "gguf-float16",
            bart_score.CheckpointLoadError,
            r"lm_head.weight holds NaN or inf values, so",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_finite_weights_that_overflow_are_told_apart_from_damage_and_from_an_architecture(
    scale, dtype, error, message, tmp_path, capsys
):
    model, tokenizer = build_tiny_causal("llama", seed=7)
    with torch.no_grad():
        if math.isinf(scale):
            model.lm_head.weight[0, 0] = scale
        else:
            model.lm_head.weight.mul_(scale / model.lm_head.weight.abs().max())
    folder = save_folder(model, tokenizer, tmp_path / "large")
    if dtype.startswith("gguf-"):
        folder, dtype = write_gguf(model, tokenizer, tmp_path / "large.gguf"), dtype.removeprefix("gguf-")
    if error is None:
        (got,) = bart_score.BARTScorer(checkpoint=folder, device="cpu", dtype=dtype).score(["A cat."], ["A dog."])
        assert got == pytest.approx(causal_score(model, tokenizer, "A cat.", "A dog."), rel=1e-5)
        return
    with pytest.raises(error, match=message) as raised:
        bart_score.BARTScorer(checkpoint=folder, device="cpu", dtype=dtype)
    if error is bart_score.InputError:  # the dtype's doing: the remedy is another dtype
        assert raised.value.option == "dtype" and Mention("dtype", "float32") in raised.value.remedy
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    texts = ["-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "src.txt")]
    capsys.readouterr()
    status = main(["score", "-m", folder, *texts, "--dtype", dtype, "-q"])
    said = capsys.readouterr().err
    expected = 2 if issubclass(error, bart_score.InputError) else 1
    assert status == expected and len(said.strip().splitlines()) == 1 and re.search(message, said), (status, said)
    assert ("use --dtype float32" in said) == (error is bart_score.InputError)


@pytest.mark.slow
def test_an_architecture_the_engine_cannot_drive_stays_an_unsupported_model(tiny_llama_folder, tmp_path):
    folder = build_gemma2_softcapped(tmp_path / "gemma2", tiny_llama_folder)
    with pytest.raises(bart_score.UnsupportedModelError, match=r"\(gemma2\) gives different log-probabilities"):
        bart_score.BARTScorer(checkpoint=folder, device="cpu")


@pytest.mark.slow
def test_cli_exit_status_tells_damaged_weights_from_an_unsupported_architecture(
    in_process, tiny_llama_folder, tmp_path
):
    damaged_copy(tiny_llama_folder, tmp_path / "damaged", float("nan"))
    unsupported = build_gemma2_softcapped(tmp_path / "gemma2", tiny_llama_folder)
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A cat sat.\n", encoding="utf-8")
    arguments = ["score", "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt"), "-q"]
    code, _, stderr = in_process(*arguments, "-m", str(tmp_path / "damaged"))
    assert code == 1 and "give non-finite log-probabilities (NaN/inf)" in stderr and "damaged" in stderr, stderr
    code, _, stderr = in_process(*arguments, "-m", unsupported)
    assert code == 2 and "does something the causal family does not support" in stderr, stderr
    assert "Traceback" not in stderr
