"""Resuming: a scoring run stopped part way keeps its finished scores, and running it again scores each remaining
pair exactly once and gives the same table."""

import json
import random
import typing

import numpy as np
import pytest
from support.fast_subset import fast_cases
from support.models import tiny_checkpoint_for
from support.text import english_like_text
from tqdm import tqdm

import bart_score
from bart_score.baselines.files import BASELINE_FOLDER_ENV
from bart_score.cli._wording import baseline_command_from
from bart_score.errors import BaselineNotFoundError, CacheFileError
from bart_score.messages import Recipe
from bart_score.meta_eval._correlation_table import MetricRow, build_report
from bart_score.meta_eval.scoring import score_benchmarks
from bart_score.scoring._directions import score_directions
from bart_score.scoring.protocols import IdentifiedScorer
from bart_score.scoring.score_cache import ResumableScorer

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
    options = property(lambda self: self.scorer.options)

    def signature_fields(self):
        return self.scorer.signature_fields()

    def process_group(self):
        return self.scorer.process_group()

    def score(self, conditions, targets, batch_size=None, *, max_tokens=None, progress=None, **per_pair):
        if self.calls == self.fail_at:
            raise RuntimeError("stopped part way")
        self.calls += 1
        self.pairs += list(zip(conditions, targets))
        return self.scorer.score(conditions, targets, batch_size, max_tokens=max_tokens, progress=progress, **per_pair)


def test_the_engine_and_its_wrapper_are_identified_scorers_with_the_same_identity(scorer, tmp_path):
    """Both have the surface bart_score.scoring.protocols's protocols describe (mypy checks the signatures where the
    package passes them), the wrapper answering for the engine it wraps."""
    wrapper = ResumableScorer(scorer, str(tmp_path / "cache.jsonl"))
    assert isinstance(scorer, IdentifiedScorer) and isinstance(wrapper, IdentifiedScorer)
    for name in ("model_label", "model_identity", "token_policy", "options"):
        assert getattr(wrapper, name) == getattr(scorer, name)
    assert wrapper.signature_fields() == scorer.signature_fields()


def test_a_missing_baseline_names_the_same_command_for_the_wrapper_as_for_its_engine(
    tmp_path_factory, tmp_path, monkeypatch
):
    """The recipe that makes the baseline gives the engine's token policy (here a causal LM's template) whichever of
    the two is scored."""
    monkeypatch.setenv(BASELINE_FOLDER_ENV, str(tmp_path))
    checkpoint = tiny_checkpoint_for(tmp_path_factory, "gpt2")
    engine = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", template="Text: {condition}\nSummary:")
    recipes = []
    for scorer in (engine, ResumableScorer(engine, str(tmp_path / "cache.jsonl"))):
        with pytest.raises(BaselineNotFoundError) as raised:
            score_directions(scorer, ["A cat sat ."], sources=["The cat sat on the mat ."], rescale="baseline")
        recipes += [part for part in raised.value.remedy if isinstance(part, Recipe)]
    assert recipes[0] == recipes[1] and recipes[0].settings["template"] == "Text: {condition}\nSummary:"
    assert "--template $'Text: {condition}\\nSummary:' -o " in baseline_command_from(recipes[0])


def table(datasets, scores):
    rows = [
        MetricRow(
            "BARTScore",
            "bartscore",
            scores={name: next(iter(per_direction.values())) for name, per_direction in scores.items()},
        )
    ]
    return build_report(datasets, rows)


@pytest.mark.slow
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
    with pytest.raises(CacheFileError, match=r"cache.jsonl line 2 is not valid JSON.*; delete the file"):
        ResumableScorer(scorer, str(cache)).score(["a ."], ["b ."])


@pytest.mark.slow
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


class RecordedBar(tqdm):
    """A progress bar that keeps each of its updates; `made` holds every bar made while it is patched in."""

    made: typing.ClassVar[list] = []

    def __init__(self, *args, **kwargs):
        self.updates = []
        self.shown = not kwargs.get("disable")
        super().__init__(*args, **kwargs)
        RecordedBar.made.append(self)

    def update(self, n=1):
        self.updates.append(n)
        return super().update(n)


@pytest.fixture
def recorded_bars(monkeypatch):
    """The bars shown (enabled) during the test, each with its updates."""
    import bart_score.scoring._progress

    RecordedBar.made = []
    monkeypatch.setattr(bart_score.scoring._progress, "tqdm", RecordedBar)
    return lambda: [bar for bar in RecordedBar.made if bar.shown]


def distinct_pairs(count):
    rng = random.Random(7)
    return (
        [english_like_text(rng, rng.randint(5, 30)) for _ in range(count)],
        [english_like_text(rng, rng.randint(3, 12)) for _ in range(count)],
    )


@pytest.mark.parametrize("chunk_pairs", fast_cases([2048, 16], [16]))  # the fast subset's: three chunks
def test_one_bar_spans_a_resumable_run_and_moves_per_model_batch_inside_each_chunk(
    tmp_path, scorer, recorded_bars, chunk_pairs
):
    conditions, targets = distinct_pairs(40)
    wrapper = ResumableScorer(scorer, str(tmp_path / "cache.jsonl"), chunk_pairs=chunk_pairs)
    wrapper.score(conditions, targets, max_tokens=64, show_progress=True)
    (bar,) = recorded_bars()
    assert bar.total == 40 and bar.n == 40
    chunks = -(-40 // chunk_pairs)
    assert len([n for n in bar.updates if n]) >= 3 * chunks  # several model batches in every chunk
    assert "pairs/s" in str(bar)

    more_conditions, more_targets = distinct_pairs(50)
    wrapper.score(conditions[:30] + more_conditions[40:], targets[:30] + more_targets[40:], show_progress=True)
    resumed = recorded_bars()[-1]
    assert resumed.total == resumed.n == 10  # the pairs this run scores; the 30 from the file are not among them


@pytest.mark.slow
def test_the_engines_own_bar_moves_per_model_batch(scorer, recorded_bars):
    conditions, targets = distinct_pairs(24)
    scorer.score(conditions, targets, max_tokens=64, show_progress=True)
    bars = recorded_bars()
    assert len(bars) == 1 and bars[0].total == bars[0].n == 24 and len(bars[0].updates) >= 3
    scorer.score_directions(targets, references=targets[::-1], sources=conditions, show_progress=True, max_tokens=64)
    shown = recorded_bars()[1:]
    assert len(shown) == 1 and shown[0].n == shown[0].total and len(shown[0].updates) >= 3
    assert "pairs/s" in str(shown[0])
