"""The score cache of `bartscore score` and `compare` (--cache, --save-every): a run that fails or is interrupted keeps
the pairs it scored, and the same command again scores only the missing ones, giving the scores of a run that was never
stopped; a served run that loses its server among them (the tests' own inference server, support/inference_server.py).
And a server that does not answer, said in one line before torch is imported."""

import os
import re
import subprocess
import sys

import pytest
from support.cli import ROOT, SOURCES, SYSTEM_A, SYSTEM_B, tsv_scores
from support.inference_server import InferenceServer

import bart_score
from bart_score.scoring.engine import BARTScorer
from bart_score.scoring.score_cache import read_cache_file

PAIRS = len(SOURCES) * 2  # faithfulness of two systems


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, lines in [("src.txt", SOURCES), ("sysA.txt", SYSTEM_A), ("sysB.txt", SYSTEM_B)]:
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths[name] = str(tmp_path / name)
    return paths


def cached_pairs(path):
    entries, _, _ = read_cache_file(str(path))
    return [entry["pair"] for entry in entries if entry["pair"] is not None]


def scores_of(stdout):
    """{(system, segment): faithfulness} of score's TSV output."""
    _, rows = tsv_scores(stdout)
    return {(row["system"], row["segment"]): float(row["faithfulness"]) for row in rows}


def score_arguments(checkpoint, files):
    return ["score", "-m", checkpoint, "-s", files["src.txt"], "-t", files["sysA.txt"], files["sysB.txt"], "-q"]


class FailingFrom:
    """The engine's score(), which raises `error` from its `call`-th call on (counted from 1), as a model that fails
    or a user who presses Ctrl-C part-way through a run."""

    def __init__(self, monkeypatch, call, error):
        self.calls, self.call, self.error = 0, call, error
        real = BARTScorer.score

        def score(scorer, *args, **keywords):
            self.calls += 1
            if self.calls >= self.call:
                raise self.error
            return real(scorer, *args, **keywords)

        monkeypatch.setattr(BARTScorer, "score", score)


@pytest.mark.parametrize(
    ("error", "status", "said"),
    [
        pytest.param(RuntimeError("the model broke"), 1, "scoring failed: the model broke", marks=pytest.mark.slow),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_a_local_run_that_fails_resumes_from_its_cache_scoring_only_the_missing_pairs(
    error, status, said, files, tiny_checkpoint, tmp_path, capsys, monkeypatch
):
    """Two pairs a chunk (--save-every 2): the third chunk fails; the two before are kept, and the same command again
    scores the last two pairs alone, its scores those of a run without a cache."""
    arguments = score_arguments(tiny_checkpoint, files)
    assert bart_score.main(arguments) == 0
    uninterrupted = scores_of(capsys.readouterr().out)
    cache = tmp_path / "cache.jsonl"
    output = tmp_path / "scores.tsv"
    with monkeypatch.context() as patch:
        failing = FailingFrom(patch, 3, error)
        assert bart_score.main([*arguments, "--cache", str(cache), "--save-every", "2", "-o", str(output)]) == status
    said_lines = capsys.readouterr().err.strip().splitlines()
    assert said_lines == [
        f"bartscore score: {said}",
        f"bartscore score: the 4 pair(s) scored before are kept in {cache}; run the same command again to resume",
    ]
    assert failing.calls == 3 and len(cached_pairs(cache)) == 4 and not output.exists()
    counting = FailingFrom(monkeypatch, PAIRS + 1, error)  # counts the calls, never fails
    assert bart_score.main([*arguments, "--cache", str(cache), "--save-every", "2", "-o", str(output)]) == 0
    assert counting.calls == 1  # the last chunk alone
    assert f"bartscore score: 2 pair(s) scored, 4 taken from {cache}" in capsys.readouterr().err
    assert scores_of(output.read_text(encoding="utf-8")) == pytest.approx(uninterrupted, abs=1e-6)
    assert sorted(cached_pairs(cache)) == sorted(set(cached_pairs(cache))) and len(cached_pairs(cache)) == PAIRS


@pytest.mark.slow
def test_a_served_run_that_loses_its_server_resumes_from_its_cache(tiny_opt, files, tmp_path, capsys):
    """The server drops every connection once it has answered three pairs (it went away): the run fails naming it,
    keeping the three pairs (a served run saves every --concurrency pairs by default), and once the server is back
    the same command sends only the missing pairs, with the scores of a run that was never stopped. Pairs are told
    by the token sequences the server scores (whatever else loading or the cache may ask it)."""
    with InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1]) as server:
        arguments = [*score_arguments(server.checkpoint, files), "--served-tokenizer", tiny_opt[0]]
        arguments += ["--concurrency", "1", "--request-retries", "0"]
        assert bart_score.main(arguments) == 0
        uninterrupted = scores_of(capsys.readouterr().out)
        pairs = {tuple(sequence) for sequence in server.scored}
        assert len(pairs) == PAIRS
        cache = tmp_path / "cache.jsonl"
        start = len(server.scored)

        def answered():
            return [tuple(sequence) for sequence in server.scored[start:] if tuple(sequence) in pairs]

        server.take_fault = lambda: "drop" if len(answered()) >= 3 else None  # then every connection dropped
        assert bart_score.main([*arguments, "--cache", str(cache)]) == 1
        said = capsys.readouterr().err.strip().splitlines()
        assert said[0].startswith("bartscore score: scoring failed: POST http://127.0.0.1:") and len(said) == 2
        assert "the connection failed" in said[0]
        assert said[1] == (
            f"bartscore score: the 3 pair(s) scored before are kept in {cache}; run the same command again to resume"
        )
        kept = set(answered())
        del server.take_fault  # back
        start = len(server.scored)
        assert bart_score.main([*arguments, "--cache", str(cache)]) == 0
        captured = capsys.readouterr()
        sent = answered()
    assert len(kept) == 3 and sorted(sent) == sorted(pairs - kept)  # the missing pairs alone, each once
    assert f"bartscore score: 3 pair(s) scored, 3 taken from {cache}" in captured.err
    assert scores_of(captured.out) == pytest.approx(uninterrupted, abs=1e-6)


@pytest.mark.slow
def test_compare_takes_its_scores_from_the_cache_that_score_wrote(files, tiny_checkpoint, tmp_path, capsys):
    cache = tmp_path / "cache.jsonl"
    assert bart_score.main([*score_arguments(tiny_checkpoint, files), "--cache", str(cache)]) == 0
    capsys.readouterr()
    arguments = ["compare", *score_arguments(tiny_checkpoint, files)[1:], "--resamples", "50", "--json"]
    assert bart_score.main(arguments) == 0
    without = capsys.readouterr().out
    assert bart_score.main([*arguments, "--cache", str(cache)]) == 0
    captured = capsys.readouterr()
    assert captured.out == without
    assert f"bartscore compare: 0 pair(s) scored, {PAIRS} taken from {cache}" in captured.err


@pytest.mark.parametrize(
    ("cache", "extra", "message"),
    [
        ("{notes}", [], r"--cache: .*notes.txt is not a score cache .*so it was left as it is"),
        ("{src}", [], r"--cache .*src.txt is the same file as --sources"),
        ("{out}", ["-o", "{out}"], r"--cache .*out.tsv is the same file as -o"),
        ("", [], r"--cache is empty"),
        ("{nowhere}", [], r"cannot write --cache .*cache.jsonl: .*blocked is not a folder"),
        ("{cache}", ["--save-every", "0"], r"--save-every must be a positive integer, got 0"),
    ],
)
def test_a_cache_that_cannot_be_used_is_refused_before_the_model_loads(
    cache, extra, message, files, tmp_path, capsys, no_model_load
):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    (tmp_path / "blocked").write_text("a file, not a folder\n", encoding="utf-8")
    paths = {
        "notes": str(notes),
        "src": files["src.txt"],
        "out": str(tmp_path / "out.tsv"),
        "nowhere": str(tmp_path / "blocked" / "cache.jsonl"),
        "cache": str(tmp_path / "cache.jsonl"),
    }
    arguments = score_arguments(str(tmp_path / "no-model"), files)
    assert bart_score.main([*arguments, "--cache", cache.format(**paths), *[e.format(**paths) for e in extra]]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("bartscore score: error: "), said
    assert re.search(message, said[0]), said
    assert notes.read_text(encoding="utf-8") == "my notes\n"


UNREACHABLE = """
import socket, sys
from bart_score.cli import main
with socket.socket() as unused:
    unused.bind(("127.0.0.1", 0))
    url = f"vllm+http://127.0.0.1:{unused.getsockname()[1]}/v1"
    status = main([sys.argv[1], "-m", url, *sys.argv[2:]])
print(status, sorted(name for name in ("torch", "transformers") if name in sys.modules))
"""


@pytest.mark.slow
@pytest.mark.parametrize("subcommand", ["score", "compare", "baseline"])
def test_a_server_that_does_not_answer_is_one_line_before_torch_is_imported(subcommand, files):
    """Its port is bound but not listening (refused at once); the subcommand fails saying so, with torch and
    transformers never imported (which took 35 to 49 s on a busy machine before this error)."""
    words = {"baseline": ["--corpus", files["src.txt"]]}.get(subcommand, score_arguments("x", files)[3:])
    done = subprocess.run(
        [sys.executable, "-c", UNREACHABLE, subcommand, *words],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.stdout.split("\n")[0] == "1 []", (done.stdout, done.stderr)
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"bartscore {subcommand}: -m/--model: no server answers at "), said
