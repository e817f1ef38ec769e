"""Resuming: a scoring run stopped part way keeps its finished scores, and running it again scores each remaining
pair exactly once and gives the same table."""

import json

import numpy as np
import pytest
from meta_eval_fixtures import write_fixture_files

import bart_score
from bart_score.errors import CacheFileError
from bart_score.meta_eval.benchmarks import load_benchmark
from bart_score.meta_eval.scoring import score_benchmarks
from bart_score.meta_eval.table import MetricRow, build_report
from bart_score.score_cache import ResumableScorer

TOLERANCE = 1e-5


class Recording:
    """The engine, noting every pair it is asked to score; raises instead of its call number `fail_at` (from 0)."""

    def __init__(self, scorer, fail_at=None):
        self.scorer = scorer
        self.fail_at = fail_at
        self.calls = 0
        self.pairs = []

    model_label = property(lambda self: self.scorer.model_label)
    model_identity = property(lambda self: self.scorer.model_identity)
    token_policy = property(lambda self: self.scorer.token_policy)

    def signature_fields(self):
        return self.scorer.signature_fields()

    def score(self, conditions, targets, batch_size=None, *, max_tokens=None, show_progress=False):
        if self.calls == self.fail_at:
            raise RuntimeError("stopped part way")
        self.calls += 1
        self.pairs += list(zip(conditions, targets))
        return self.scorer.score(conditions, targets, batch_size, max_tokens=max_tokens)


@pytest.fixture(scope="module")
def benchmark_data(tmp_path_factory):
    paths = write_fixture_files(tmp_path_factory.mktemp("benchmarks"))
    return {name: load_benchmark(name, data_file=path) for name, path in paths.items()}


def table(datasets, scores):
    rows = [
        MetricRow(
            "BARTScore",
            "bartscore",
            scores={name: next(iter(per_direction.values())) for name, per_direction in scores.items()},
        )
    ]
    return build_report(datasets, rows)


def test_a_stopped_run_resumes_scoring_each_remaining_pair_once(tmp_path, scorer, benchmark_data):
    everything = Recording(scorer)
    expected, _ = score_benchmarks(everything, benchmark_data, detokenize=False)
    distinct = set(everything.pairs)

    cache = str(tmp_path / "cache.jsonl")
    stopped = Recording(scorer, fail_at=2)
    with pytest.raises(RuntimeError, match="stopped part way"):
        score_benchmarks(ResumableScorer(stopped, cache, chunk_pairs=5), benchmark_data, detokenize=False)
    assert len(stopped.pairs) == 10  # two chunks finished before the stop ...
    with open(cache, encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    assert len(lines) == 1 + 10 and "signature" in lines[0]  # ... and both are in the file

    resumed = Recording(scorer)
    wrapper = ResumableScorer(resumed, cache, chunk_pairs=5)
    scores, _ = score_benchmarks(wrapper, benchmark_data, detokenize=False)
    assert len(resumed.pairs) == len(set(resumed.pairs))  # nothing scored twice in this run,
    assert not set(resumed.pairs) & set(stopped.pairs)  # nothing scored again that the first run finished,
    assert set(resumed.pairs) | set(stopped.pairs) == distinct  # and nothing lost
    assert (wrapper.scored_pairs, wrapper.cached_pairs) == (len(distinct) - 10, 10)
    for name, per_direction in expected.items():
        for direction, values in per_direction.items():
            assert np.max(np.abs(scores[name][direction] - values)) < TOLERANCE
    report, text = table(benchmark_data, scores)
    expected_report, expected_text = table(benchmark_data, expected)
    assert text == expected_text
    for got, want in zip(report["rows"][0]["values"].values(), expected_report["rows"][0]["values"].values()):
        assert abs(got["value"] - want["value"]) < 1e-6

    again = Recording(scorer)
    rerun, _ = score_benchmarks(ResumableScorer(again, cache), benchmark_data, detokenize=False)
    assert again.calls == 0
    for name, per_direction in scores.items():
        for direction, values in per_direction.items():
            assert np.array_equal(rerun[name][direction], values)


def test_an_unfinished_last_line_is_dropped_and_its_pair_scored_again(tmp_path, scorer):
    cache = tmp_path / "cache.jsonl"
    conditions, targets = ["The cat sat .", "A day ."], ["The cat .", "The day ."]
    first = scorer.score(conditions, targets)
    ResumableScorer(scorer, str(cache)).score(conditions, targets)
    content = cache.read_text(encoding="utf-8")
    cache.write_text(content[: content.rindex("\n", 0, len(content) - 1) + 1] + '{"scorer": "ab', encoding="utf-8")
    counted = Recording(scorer)
    with pytest.warns(UserWarning, match=r"ended in an unfinished line"):
        again = ResumableScorer(counted, str(cache)).score(conditions, targets)
    assert counted.pairs == [(conditions[1], targets[1])]
    assert np.max(np.abs(np.array(again) - first)) < TOLERANCE
    assert all(json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines())


def test_a_damaged_line_is_reported(tmp_path, scorer):
    cache = tmp_path / "cache.jsonl"
    ResumableScorer(scorer, str(cache)).score(["a ."], ["b ."])
    lines = cache.read_text(encoding="utf-8").splitlines()
    cache.write_text("\n".join([lines[0], "not json", *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(CacheFileError, match=r"damaged at line 2; delete the file"):
        ResumableScorer(scorer, str(cache)).score(["a ."], ["b ."])


def test_another_scorers_scores_are_not_used(tmp_path, scorer, tiny_checkpoint):
    cache = str(tmp_path / "cache.jsonl")
    ResumableScorer(scorer, cache).score(["The cat sat ."], ["The cat ."])
    shorter = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu", max_length=64)
    counted = Recording(shorter)
    ResumableScorer(counted, cache).score(["The cat sat ."], ["The cat ."])
    assert counted.pairs == [("The cat sat .", "The cat .")]
    with open(cache, encoding="utf-8") as handle:
        scorers = {json.loads(line)["scorer"] for line in handle}
    assert len(scorers) == 2
