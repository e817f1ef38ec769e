"""Scoring `datasets` corpora with a batched map: Dataset, IterableDataset, one process per device."""

import numpy as np
import pytest
from support.lazy import LazyModule

import bart_score
from bart_score.messages import Mention

# Imported by the worker that runs these tests (about a second of CPU time, with pandas and pyarrow), not while every
# worker collects them (support/lazy.py).
datasets = LazyModule("datasets")
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def corpus():
    rows = {
        "article": [f"Article {i}: the government said the river was high after the rain." for i in range(9)],
        "summary": [f"Summary {i} of the article." for i in range(9)],
        "gold": [[f"Gold {i}."] + [f"Second gold {i}."] * (i % 2) for i in range(9)],
    }
    return datasets.Dataset.from_dict(rows)


def expected_columns(scorer, corpus, **options):
    result = scorer.score_directions(corpus["summary"], references=corpus["gold"], sources=corpus["article"], **options)
    return {f"bartscore_{d}": result[d] for d in bart_score.DIRECTIONS if d in result}


def assert_columns(scored, expected):
    for column, values in expected.items():
        assert np.max(np.abs(np.array(scored[column]) - values)) < TOLERANCE, column


@pytest.mark.slow
def test_map_adds_a_column_per_direction(corpus, scorer):
    scored = bart_score.score_dataset(
        corpus, scorer, predictions="summary", references="gold", sources="article", rows_per_batch=4
    )
    assert scored.column_names == ["article", "summary", "gold", *(f"bartscore_{d}" for d in bart_score.DIRECTIONS)]
    assert_columns(scored, expected_columns(scorer, corpus))


@pytest.mark.slow
def test_iterable_dataset_streams(corpus, scorer):
    stream = corpus.to_iterable_dataset(num_shards=3)
    scored = bart_score.score_dataset(
        stream,
        scorer,
        predictions="summary",
        sources="article",
        rows_per_batch=2,
        directions="faithfulness",
        prompt="mt",
    )
    rows = list(scored)
    assert len(rows) == 9
    expected = scorer.score_directions(corpus["summary"], sources=corpus["article"], prompt="mt")
    assert np.allclose([row["bartscore_faithfulness"] for row in rows], expected["faithfulness"], atol=TOLERANCE)


@pytest.mark.slow
def test_one_scorer_per_process(corpus, scorer, tiny_checkpoint):
    scored = bart_score.score_dataset(
        corpus,
        {"checkpoint": tiny_checkpoint, "device": "cpu"},
        predictions="summary",
        references="gold",
        sources="article",
        rows_per_batch=3,
        num_proc=2,
    )
    assert_columns(scored, expected_columns(scorer, corpus))


def test_bad_arguments_are_named(corpus, scorer):
    with pytest.raises(ValueError, match=r"sources='source' is not a column of the dataset") as raised:
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="source")
    assert (raised.value.option, raised.value.value) == ("sources", "source")
    assert Mention("sources", "source") in raised.value.parts
    with pytest.raises(ValueError, match=r"scorer must be a dict of arguments with num_proc > 1") as raised:
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="article", num_proc=2)
    assert raised.value.option == "scorer" and Mention("num_proc") in raised.value.parts
    with pytest.raises(ValueError, match=r"rescale='corpus' would give each batch reference points") as raised:
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="article", rescale="corpus")
    assert (raised.value.option, raised.value.value) == ("rescale", "corpus")
    assert Mention("rescale", "baseline") in raised.value.remedy
    with pytest.raises(ValueError, match=r"'recall' needs references, which"):
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="article", directions="recall")


@pytest.mark.parametrize("streaming", [False, True])
def test_a_bad_cell_is_named_by_its_column_and_dataset_row(corpus, scorer, streaming):
    gold = list(corpus["gold"])
    gold[7] = []
    broken = corpus.remove_columns("gold").add_column("gold", gold)
    if streaming:
        broken = broken.to_iterable_dataset()
    with pytest.raises(ValueError, match=r"column 'gold' at row 7 is an empty list") as raised:
        scored = bart_score.score_dataset(broken, scorer, predictions="summary", references="gold", rows_per_batch=3)
        if streaming:
            list(scored)  # an IterableDataset is scored as it is iterated
    # The entry is the dataset's column and row as data too, not the batch's references[1].
    assert (raised.value.option, raised.value.value) == ("references", "gold")
    assert raised.value.parts[0] == "column 'gold' at row 7"


SCRIPT = """import sys

import datasets

import bart_score
from bart_score.messages import Mention

rows = datasets.Dataset.from_dict({"prediction": ["A cat sat.", "A dog ran."], "source": ["The cat sat.", "A dog."]})


def score():
    scorer = {"checkpoint": sys.argv[1], "device": "cpu"}
    return bart_score.score_dataset(rows, scorer, sources="source", num_proc=2)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "tail",
    [
        "scored = bart_score.score_dataset(rows, {'checkpoint': sys.argv[1]}, sources='source', num_proc=2)\n",
        "score()\n",  # through a function of the script, called at its top level
        "if __name__ == '__main__':\n    pass\nscore()\n",  # a guard elsewhere does not cover the call
    ],
)
def test_num_proc_in_a_script_without_a_main_guard_fails_at_once_saying_what_to_add(tmp_path, tiny_checkpoint, tail):
    import os
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(SCRIPT + tail, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, str(script), tiny_checkpoint],
        capture_output=True,
        text=True,
        timeout=600,  # the workers' start-up error used to leave the parent waiting for minutes
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert completed.returncode == 1
    assert (
        f"bart_score.errors.InputError: score_dataset(num_proc=2) starts worker processes that run {str(script)!r}"
        in (completed.stderr)
    )
    assert 'put the script\'s code under `if __name__ == "__main__":`' in completed.stderr
    assert "bootstrapping phase" not in completed.stderr  # refused in the parent, before any worker started


@pytest.mark.slow
def test_num_proc_under_a_main_guard_scores_as_one_process_does(tmp_path, tiny_checkpoint, scorer):
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "guarded.py"
    script.write_text(
        SCRIPT
        + "if __name__ == '__main__':\n"
        + "    print(__import__('json').dumps(list(score()['bartscore_faithfulness'])))\n",
        encoding="utf-8",
    )
    completed = subprocess.run(
        [sys.executable, str(script), tiny_checkpoint],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    expected = scorer.score_directions(["A cat sat.", "A dog ran."], sources=["The cat sat.", "A dog."])
    assert np.allclose(json.loads(completed.stdout.strip().splitlines()[-1]), expected["faithfulness"], atol=1e-5)
