"""torch's CPU threads: the option threads (--threads, the metric's keyword, a Space model entry's threads=N), which
the engine sets when it loads and only when asked (torch.set_num_threads is process-wide, and a caller's own setting
stands); and the command line's default, which leaves OMP_NUM_THREADS to torch and else takes the cores this process
may use less the load average, at least 1. Its speed beside other work is bench/bench_threads.py's to measure."""

import os

import pytest
import torch
from support.cli import SOURCES, SYSTEM_A

import bart_score
from bart_score.cli._requests import THREAD_VARIABLES, default_threads
from bart_score.errors import InputError
from bart_score.options import MAX_THREADS, EngineOptions


@pytest.fixture
def torch_threads():
    """Puts torch's threads back as conftest.py sets them (one) after the test."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("value", [0, -1, MAX_THREADS + 1, 1.5, "2", True])
def test_threads_is_a_whole_number_from_1_to_the_most(value):
    with pytest.raises(InputError, match=rf"threads must be an integer from 1 to {MAX_THREADS}, got "):
        EngineOptions(threads=value)
    assert EngineOptions(threads=MAX_THREADS).threads == MAX_THREADS and EngineOptions().threads is None


@pytest.mark.slow
def test_the_engine_sets_torchs_threads_only_when_asked(tiny_checkpoint, torch_threads):
    torch.set_num_threads(3)  # the caller's own setting
    bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    assert torch.get_num_threads() == 3
    scorer = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", threads=2)
    assert torch.get_num_threads() == 2 and scorer.options.threads == 2
    assert "thread" not in scorer.score_directions(["A cat."], sources=["A cat sat."])["signature"]  # no score changes


@pytest.mark.parametrize(
    ("cores", "load", "threads"),
    [(2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 6.0, 1), (8, 2.4, 6), (8, 20.0, 1), (8, OSError(), 8)],
)
def test_the_command_lines_default_is_the_cores_less_the_load_at_least_1(cores, load, threads, monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: set(range(cores)))

    def load_average():
        if isinstance(load, OSError):
            raise load
        return (load, load, load)

    monkeypatch.setattr(os, "getloadavg", load_average)
    assert default_threads() == threads


@pytest.mark.parametrize("variable", THREAD_VARIABLES)
def test_the_command_lines_default_leaves_the_threads_an_environment_variable_sets(variable, monkeypatch):
    monkeypatch.setenv(variable, "3")
    assert default_threads() is None


@pytest.mark.slow
def test_score_sets_the_threads_given_or_its_default(tiny_checkpoint, tmp_path, monkeypatch, capsys, torch_threads):
    (tmp_path / "src.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("\n".join(SYSTEM_A) + "\n", encoding="utf-8")
    arguments = ["score", "-m", tiny_checkpoint, "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt")]
    assert bart_score.main([*arguments, "-q", "--threads", "3"]) == 0
    assert torch.get_num_threads() == 3
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    assert bart_score.main([*arguments, "-q"]) == 0
    assert torch.get_num_threads() == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)  # as torch reads OMP_NUM_THREADS=1 when it starts
    assert bart_score.main([*arguments, "-q"]) == 0
    assert torch.get_num_threads() == 1
    assert bart_score.main([*arguments, "--threads", "0"]) == 2
    assert "error: --threads must be an integer from 1 to 1024, got 0" in capsys.readouterr().err


def test_a_space_model_entry_takes_threads_as_the_command_line_reads_it():
    from space.settings import _model_entry

    assert _model_entry("small=cnn;threads=2") == ("small", {"checkpoint": "cnn", "threads": 2})
    for given in ("0", "two", "²"):
        with pytest.raises(ValueError, match=rf"entry .small=cnn;threads={given}.: threads must be an integer from 1"):
            _model_entry(f"small=cnn;threads={given}")
