"""Scoring `datasets` corpora with a batched map: Dataset, IterableDataset, one process per device."""

import datasets
import numpy as np
import pytest

import bart_score

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


def test_map_adds_a_column_per_direction(corpus, scorer):
    scored = bart_score.score_dataset(
        corpus, scorer, predictions="summary", references="gold", sources="article", rows_per_batch=4
    )
    assert scored.column_names == ["article", "summary", "gold", *(f"bartscore_{d}" for d in bart_score.DIRECTIONS)]
    assert_columns(scored, expected_columns(scorer, corpus))


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
    with pytest.raises(ValueError, match=r"sources='source' is not a column of the dataset"):
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="source")
    with pytest.raises(ValueError, match=r"pass the scorer as a dict"):
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="article", num_proc=2)
    with pytest.raises(ValueError, match=r"'recall' needs references="):
        bart_score.score_dataset(corpus, scorer, predictions="summary", sources="article", directions="recall")


@pytest.mark.parametrize("streaming", [False, True])
def test_a_bad_cell_is_named_by_its_column_and_dataset_row(corpus, scorer, streaming):
    gold = list(corpus["gold"])
    gold[7] = []
    broken = corpus.remove_columns("gold").add_column("gold", gold)
    if streaming:
        broken = broken.to_iterable_dataset()
    with pytest.raises(ValueError, match=r"column 'gold' at row 7 is an empty list"):
        scored = bart_score.score_dataset(broken, scorer, predictions="summary", references="gold", rows_per_batch=3)
        if streaming:
            list(scored)  # an IterableDataset is scored as it is iterated
