"""Work that is less than asked is said and recorded: fewer reference pairs than requested, reference points too
close together to make a scale; and checks that come before any model loads."""

import itertools
import json
import warnings

import numpy as np
import pytest

import bart_score.engine
from bart_score import rescale
from bart_score.baselines.build import build_baseline
from bart_score.cli import main
from bart_score.cli.common import flag_message

TEXTS = [f"Text number {word} is about the {thing} ." for word, thing in zip("abcdefghijkl", "catdogsunmapcar" * 2)]


def distinct_reference_pairs(texts):
    """Copies and unrelated pairs of plain texts, each text its own document, by a plain loop."""
    return len(texts) + len(list(itertools.permutations(texts, 2)))


def test_fewer_pairs_than_asked_are_reported_and_recorded(copier, tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert len(set(TEXTS)) == 12
    with pytest.warns(UserWarning, match=r"2000 reference pairs were asked for, but the texts give only 144"):
        document = build_baseline(copier, texts=TEXTS, corpus_file=str(path), pairs=2000)
    assert document["sampling"]["pairs"] == 2000
    assert document["sampling"]["pairs_scored"] == distinct_reference_pairs(TEXTS) == 144
    with warnings.catch_warnings():  # enough pairs (half the budget each for the copies and the unrelated pairs)
        warnings.filterwarnings("error", message=".*reference pairs were asked for")
        document = build_baseline(copier, texts=TEXTS, corpus_file=str(path), pairs=24)
    assert document["sampling"] == {"pairs": 24, "pairs_scored": 24, "seed": rescale.DEFAULT_SEED}


def test_the_cli_baseline_reports_fewer_pairs_than_asked(copying_checkpoint, tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    argv = ["baseline", "-m", copying_checkpoint, "--device", "cpu", "-q", "--corpus", str(path), "--pairs", "2000"]
    with pytest.warns(UserWarning, match=r"2000 reference pairs were asked for, but the texts give only 144"):
        assert main([*argv, "-o", str(tmp_path / "b.json")]) == 0
    recorded = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["sampling"]
    assert (recorded["pairs"], recorded["pairs_scored"]) == (2000, 144)


@pytest.mark.parametrize(
    "unrelated, copy, degenerate",
    [(-3.0, -2.99, True), (-3.0, -2.86, True), (-3.0, -2.84, False), (-4.5, -0.5, False), (-0.02, -0.01, False)],
)
def test_reference_points_closer_than_the_threshold_are_degenerate(unrelated, copy, degenerate):
    point = rescale.ReferencePoints(unrelated, copy)
    gap, size = copy - unrelated, max(abs(copy), abs(unrelated))
    assert point.degenerate == (gap < 0.05 * size) == degenerate


def test_degenerate_points_are_warned_of_at_use(recwarn):
    close = {"faithfulness": rescale.ReferencePoints(unrelated=-3.0, copy=-2.99)}
    rescaled = rescale.rescaled_scores({"faithfulness": [-5.0]}, close)
    assert rescaled["faithfulness"][0] == pytest.approx((-5.0 + 3.0) / 0.01)  # -200: far outside 0..1
    (warning,) = [w for w in recwarn if "barely differ" in str(w.message)]
    assert "faithfulness reference points barely differ" in str(warning.message)
    assert "100 rescaled units" in str(warning.message)
    apart = {"faithfulness": rescale.ReferencePoints(unrelated=-4.5, copy=-0.5)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.allclose(rescale.rescaled_scores({"faithfulness": [-0.5]}, apart)["faithfulness"], [1.0])


def test_degenerate_points_are_warned_of_when_a_baseline_is_built(copier, tmp_path, monkeypatch):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    monkeypatch.setattr(
        rescale.ReferencePairs,
        "points",
        lambda self, scores: {d: rescale.ReferencePoints(-3.0, -2.99) for d in self.points_of},
    )
    with pytest.warns(UserWarning, match=r"the baseline's faithfulness reference points barely differ"):
        build_baseline(copier, texts=TEXTS, corpus_file=str(path), pairs=100)


@pytest.fixture
def no_model_load(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(bart_score.engine.BARTScorer, "__init__", refuse)


def test_the_cli_speaks_of_flags_where_the_library_names_keywords():
    assert (
        flag_message(ValueError("pass device='cpu' (or leave device out)")) == "pass --device cpu (or leave device out)"
    )


@pytest.fixture
def texts(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--batch-size", "0"], "--batch-size must be a positive integer"),
        (["--device", "gpu0"], "--device"),
        (["-d", "faithfulness,faithfulness"], "directions[1] is 'faithfulness' again"),
        (["--baseline", "{folder}/missing.json"], "no baseline file at"),
        (["--rescale"], "holds no baseline file"),
        (["--rescale", "corpus", "--rescale-pairs", "0"], "--rescale-pairs must be a positive integer"),
        (["-s", "/dev/zero"], "--sources /dev/zero is a character device"),
    ],
)
def test_a_bad_argument_fails_before_any_model_loads(
    copying_checkpoint, texts, tmp_path, monkeypatch, no_model_load, capsys, arguments, message
):
    monkeypatch.setenv("BARTSCORE_BASELINES", str(tmp_path / "no-baselines-yet"))
    arguments = [a.format(folder=tmp_path) for a in arguments]
    source = [] if "-s" in arguments else ["-s", texts]
    other = tmp_path / "other.txt"
    other.write_text("\n".join(reversed(TEXTS)) + "\n", encoding="utf-8")
    for command in ("score", "compare"):
        assert main([command, "-m", copying_checkpoint, *source, "-t", texts, str(other), *arguments]) == 2
        error = capsys.readouterr().err
        assert message in error, error


def test_a_missing_cuda_device_is_named_by_its_flag_on_the_command_line(copying_checkpoint, texts, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip(reason="this machine has a CUDA device")
    assert main(["score", "-m", copying_checkpoint, "-s", texts, "-t", texts, "--device", "cuda"]) == 2
    error = capsys.readouterr().err
    assert "pass --device cpu" in error and "device=" not in error
