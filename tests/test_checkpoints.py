"""Finding a checkpoint: a Hub id that is not cached fails at once, naming HF_HUB_OFFLINE=1 and how to provide the
checkpoint, when the Hub cannot be reached (one short request, never huggingface_hub's retries); paths that name
nothing are refused as paths, not looked up on the Hub."""

import os
import subprocess
import sys
import time

import pytest
from huggingface_hub import constants as hub_constants
from support.cli import ROOT

import bart_score
from bart_score.messages import FileName
from bart_score.models import loading
from bart_score.models.checkpoints import locate_checkpoint

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once


@pytest.fixture
def online_but_unreachable(empty_hf_cache, monkeypatch):
    """HF_HUB_OFFLINE unset, an empty cache, and a Hub endpoint that cannot be reached; any retry's sleep fails."""
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_constants, "ENDPOINT", UNREACHABLE)

    def no_retries(seconds):
        raise AssertionError(f"a request was retried after {seconds} s")

    monkeypatch.setattr(time, "sleep", no_retries)
    return empty_hf_cache


def test_an_uncached_hub_id_fails_at_once_when_the_hub_cannot_be_reached(online_but_unreachable):
    with pytest.raises(bart_score.CheckpointNotFoundError) as raised:
        bart_score.BARTScorer(checkpoint="facebook/bart-large-cnn", device="cpu")
    message = str(raised.value)
    assert f"({UNREACHABLE} cannot be reached:" in message
    assert "; working offline, set HF_HUB_OFFLINE=1, so that the Hub is not tried; " in message
    assert message.endswith(
        "run `hf download facebook/bart-large-cnn` online and copy its cache here, or give a folder or GGUF file"
    )


def test_with_hf_hub_offline_the_hub_is_not_even_probed(empty_hf_cache, monkeypatch):
    monkeypatch.setattr(hub_constants, "ENDPOINT", UNREACHABLE)
    monkeypatch.setattr(loading, "hub_unreachable", lambda: pytest.fail("the Hub was probed"))
    with pytest.raises(bart_score.CheckpointNotFoundError, match=r"could not be downloaded \(HF_HUB_OFFLINE is set\)"):
        bart_score.BARTScorer(checkpoint="facebook/bart-large-cnn", device="cpu")


@pytest.mark.slow
def test_cli_fails_at_once_without_hf_hub_offline_when_the_hub_cannot_be_reached(tmp_path):
    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("A cat sat.\n", encoding="utf-8")
    environment = {key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"}
    environment.update(HF_HOME=str(tmp_path / "empty-hf"), HF_ENDPOINT=UNREACHABLE)
    inputs = ["-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt")]
    completed = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bartscore.py"), "score", "-m", "cnn", *inputs],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    assert "Retry" not in completed.stderr and "Traceback" not in completed.stderr, completed.stderr
    assert "set HF_HUB_OFFLINE=1" in completed.stderr and "hf download facebook/bart-large-cnn" in completed.stderr


@pytest.mark.parametrize("name", ["/nowhere/no-model", "./no-model-here", "../no-model-here", "~/no-model-here"])
def test_a_path_that_names_nothing_is_refused_as_a_path(name, online_but_unreachable, monkeypatch):
    monkeypatch.setattr(loading, "hub_unreachable", lambda: pytest.fail("a path was looked up on the Hub"))
    with pytest.raises(
        bart_score.CheckpointNotFoundError, match=rf"there is no checkpoint folder at '{name}'"
    ) as raised:
        bart_score.BARTScorer(checkpoint=name, device="cpu")
    assert raised.value.parts == ("there is no checkpoint folder at ", FileName(name))


def test_a_hub_id_stays_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no folder of that name here
    located = locate_checkpoint("facebook/bart-large-cnn")
    assert (located.local, located.source, located.label, located.gguf_file) == (
        False,
        "facebook/bart-large-cnn",
        "facebook/bart-large-cnn",
        None,
    )
