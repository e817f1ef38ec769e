"""Rescaled scores: reference points equal plain-loop means on a tiny model that can copy, the map is linear and
keeps every ranking, corpus reference pairs are drawn from different documents within their budget, in the same
engine call, and the metric and score_dataset pass it all through; points too close together to make a scale are
degenerate, and warned of where they are used."""

import itertools
import os
import random
import statistics
import warnings

import numpy as np
import pytest
from scipy import stats
from support.lazy import LazyModule
from support.metric import MODULE
from support.reference import reference_directions, reference_points
from support.text import english_like_text

import bart_score
from bart_score import CorpusPoints
from bart_score.baselines import rescale
from bart_score.baselines.build import build_baseline
from bart_score.errors import InputTypeError
from bart_score.messages import Mention
from bart_score.scoring._directions import score_directions
from bart_score.scoring.protocols import IdentifiedScorer

TOLERANCE = 1e-5
evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)

SOURCES = ["The cat sat on the mat all day.", "The team won the game last week.", "A report says the market was high."]
PREDICTIONS = ["A cat sat on a mat.", "The team won.", "The market was high."]
REFERENCES = [["The cat was on the mat."], ["They won the game.", "The team won a game."], ["Markets were high."]]


@pytest.mark.slow
def test_a_request_is_planned_without_scoring_and_finished_from_its_pairs_scores(copier):
    """score_directions is plan_directions (which reads only the scorer's identity), one engine call, and
    direction_results: the same result, rescaling samples included."""
    from bart_score.scoring._directions import direction_results, plan_directions

    class IdentityOnly:  # no score(): planning must not score
        model_label, options = copier.model_label, copier.options

        def signature_fields(self):
            return copier.signature_fields()

    directions = ("faithfulness", "precision", "recall")
    request = dict(references=REFERENCES, sources=SOURCES, prompt=["In other words"], rescale="corpus")
    plan = plan_directions(IdentityOnly(), PREDICTIONS, **request)
    groups = set(plan.call.spans)  # each direction's pairs, and the reference points' samples
    assert set(directions) < groups and all(isinstance(g, tuple) for g in groups - set(directions))
    scores = copier.score(plan.call.conditions, plan.call.targets)
    assert direction_results(plan, scores) == score_directions(copier, PREDICTIONS, **request)


def rescaled_by_hand(raw, unrelated, copy):
    return [(x - unrelated) / (copy - unrelated) for x in raw]


def hand_points(model_and_tokenizer, predictions, references, sources, prompts=(), side="encoder"):
    """Every cross-row pair (rows here are all different documents) and every distinct target given itself."""
    rows = range(len(predictions))
    cross = [(i, j) for i, j in itertools.product(rows, rows) if i != j]
    faithfulness = reference_points(
        *model_and_tokenizer, [(sources[i], predictions[j]) for i, j in cross], predictions, prompts, side
    )
    precision = reference_points(
        *model_and_tokenizer,
        [(ref, predictions[j]) for i, j in cross for ref in references[i]],
        predictions,
        prompts,
        side,
    )
    recall = reference_points(
        *model_and_tokenizer,
        [(predictions[i], ref) for i, j in cross for ref in references[j]],
        [ref for refs in references for ref in refs],
        prompts,
        side,
    )
    f_score = ((precision[0] + recall[0]) / 2, (precision[1] + recall[1]) / 2)
    return {"faithfulness": faithfulness, "precision": precision, "recall": recall, "f_score": f_score}


@pytest.mark.parametrize(
    "prompt, side, aggregation",
    [
        (None, "encoder", "mean"),
        pytest.param(["In other words", "That is to say"], "decoder", "max", marks=pytest.mark.slow),
    ],
)
def test_corpus_reference_points_are_the_means_of_cross_row_pairs_and_copies(
    copier, copier_reference_model, prompt, side, aggregation
):
    result = copier.score_directions(
        PREDICTIONS,
        references=REFERENCES,
        sources=SOURCES,
        aggregation=aggregation,
        prompt=prompt,
        prompt_side=side,
        rescale="corpus",
    )
    raw = reference_directions(
        *copier_reference_model,
        PREDICTIONS,
        REFERENCES,
        SOURCES,
        aggregation=aggregation,
        prompts=prompt or (),
        side=side,
    )
    points = hand_points(copier_reference_model, PREDICTIONS, REFERENCES, SOURCES, prompt or (), side)
    for direction in bart_score.DIRECTIONS:
        unrelated, copy = points[direction]
        assert copy > unrelated, direction  # the copying model tells them apart
        shown = result["reference_points"][direction]
        assert [shown["unrelated"], shown["copy"]] == pytest.approx([unrelated, copy], abs=TOLERANCE), direction
        assert result[direction] == pytest.approx(raw[direction], abs=TOLERANCE)  # raw scores stay
        if direction == "f_score":  # the mean of rescaled precision and rescaled recall
            expected = [
                (p + r) / 2
                for p, r in zip(
                    rescaled_by_hand(raw["precision"], *points["precision"]),
                    rescaled_by_hand(raw["recall"], *points["recall"]),
                )
            ]
        else:
            expected = rescaled_by_hand(raw[direction], unrelated, copy)
        assert result[f"{direction}_rescaled"] == pytest.approx(expected, abs=1e-4), direction
        assert result[f"{direction}_rescaled_mean"] == pytest.approx(np.mean(expected), abs=1e-4)
    assert "|prompt:" in result["signature"]
    assert result["signature"].split("|")[5].startswith("rescale:corpus-")


@pytest.mark.slow
def test_systems_of_one_corpus_are_one_document_per_segment(copier, copier_reference_model):
    """score_corpus repeats each segment's source for every system: those rows are one document, so an unrelated pair
    never takes a system's output of the same segment."""
    corpus = bart_score.Corpus(
        systems={"a": PREDICTIONS, "b": ["Cats sit.", "A game was played.", "Prices rose."]}, sources=SOURCES
    )
    per_system, signature = bart_score.score_corpus(copier, corpus, rescale="corpus")
    outputs = [(segment, text) for texts in corpus.systems.values() for segment, text in enumerate(texts)]
    unrelated, copy = reference_points(
        *copier_reference_model,
        [(SOURCES[i], text) for i in range(3) for segment, text in outputs if segment != i],
        [text for _, text in outputs],
    )
    for name, texts in corpus.systems.items():
        raw = reference_directions(*copier_reference_model, texts, sources=SOURCES)["faithfulness"]
        assert per_system[name]["faithfulness"] == pytest.approx(raw, abs=TOLERANCE)
        assert per_system[name]["faithfulness_rescaled"] == pytest.approx(
            rescaled_by_hand(raw, unrelated, copy), abs=1e-4
        )
    assert "|rescale:corpus-" in signature


@pytest.mark.parametrize("systems", [1, 3])
@pytest.mark.parametrize(
    "rows, sources, references",
    [
        (1, [SOURCES[0]], None),
        (3, [SOURCES[0]] * 3, None),
        (3, None, [REFERENCES[0]] * 3),
        (3, SOURCES, [["Shared."], ["Shared.", "Other."], ["Other."]]),  # chained through references
    ],
)
def test_one_document_is_counted_in_the_rows_given(copier, monkeypatch, systems, rows, sources, references):
    """score_corpus and build_baseline repeat each row once per system: the message counts the rows as given."""
    calls = []
    monkeypatch.setattr(copier, "score", lambda *args, **kwargs: calls.append(args))
    names = ["a", "b", "c"][:systems]
    corpus = bart_score.Corpus({name: PREDICTIONS[:rows] for name in names}, sources=sources, references=references)
    counted = "the 1 row is" if rows == 1 else "all 3 rows are"
    remedy = r"pass unrelated texts of your own as corpus_points\.unrelated_texts or rescale with a baseline file"
    with pytest.raises(ValueError, match=rf"but {counted} one document \(rows that share .*; {remedy}") as raised:
        bart_score.score_corpus(copier, corpus, rescale="corpus")
    assert (raised.value.option, raised.value.parts[0]) == ("rescale", Mention("rescale", "corpus"))
    assert [part for part in raised.value.remedy if isinstance(part, Mention)] == [
        Mention("corpus_points.unrelated_texts"),
        Mention("rescale", "baseline"),
    ]
    with pytest.raises(ValueError, match=rf"but {counted} one document"):
        copier.score_directions(PREDICTIONS[:rows], sources=sources, references=references, rescale="corpus")
    with pytest.raises(ValueError, match=rf"a baseline needs unrelated pairs, .* but {counted} one document .*; make"):
        build_baseline(copier, corpus=corpus, corpus_file=os.devnull)
    assert calls == []  # refused before any scoring


def test_rows_from_two_documents_or_more_are_accepted(copier):
    documents = rescale.corpus_documents(3, sources=[SOURCES[0], SOURCES[0], SOURCES[1]])
    assert len(set(documents)) == 2 and documents[0] == documents[1]


@pytest.mark.slow
def test_fixed_unrelated_texts_serve_inputs_that_share_one_source(copier, copier_reference_model):
    unrelated_texts = ["Bake the bread for an hour.", "Rain is expected in the north."]
    with pytest.raises(ValueError, match=r"all 3 rows are one document .* pass unrelated texts of your own as corpus_"):
        copier.score_directions(PREDICTIONS, sources=[SOURCES[0]] * 3, rescale="corpus")
    with pytest.raises(ValueError, match="rescaling needs texts to take reference points from; there are none"):
        copier.score_directions(
            [], sources=[], rescale="corpus", corpus_points=CorpusPoints(unrelated_texts=unrelated_texts)
        )
    result = copier.score_directions(
        PREDICTIONS,
        references=[REFERENCES[0]] * 3,
        sources=[SOURCES[0]] * 3,
        directions=["faithfulness", "recall"],
        rescale="corpus",
        corpus_points=CorpusPoints(unrelated_texts=unrelated_texts),
    )
    faithfulness = reference_points(
        *copier_reference_model, [(u, p) for u in unrelated_texts for p in PREDICTIONS], PREDICTIONS
    )
    recall = reference_points(*copier_reference_model, [(u, REFERENCES[0][0]) for u in unrelated_texts], REFERENCES[0])
    shown = result["reference_points"]
    assert [shown["faithfulness"]["unrelated"], shown["faithfulness"]["copy"]] == pytest.approx(faithfulness, abs=1e-5)
    assert [shown["recall"]["unrelated"], shown["recall"]["copy"]] == pytest.approx(recall, abs=1e-5)
    assert set(shown) == {"faithfulness", "recall"}


@pytest.mark.slow
def test_reference_pairs_join_the_corpus_pairs_in_one_engine_call_within_the_budget(copier, monkeypatch):
    rng = random.Random(3)
    sources = [english_like_text(rng, 12) for _ in range(8)]
    predictions = [english_like_text(rng, 6) for _ in range(8)]
    references = [[english_like_text(rng, 6)] for _ in range(8)]
    calls = []
    score = copier.score

    def counting(conditions, targets, *args, **kwargs):
        calls.append(len(conditions))
        return score(conditions, targets, *args, **kwargs)

    monkeypatch.setattr(copier, "score", counting)
    copier.score_directions(predictions, references, sources)
    copier.score_directions(predictions, references, sources, rescale="corpus", corpus_points=CorpusPoints(pairs=40))
    assert len(calls) == 2
    assert 0 < calls[1] - calls[0] <= 40
    copier.score_directions(
        predictions, references, sources, prompt="paraphrase", rescale="corpus", corpus_points=CorpusPoints(pairs=40)
    )
    assert len(calls) == 3 and calls[2] - calls[0] * 34 <= 40 * 34  # each reference pair is prompted like the rest


def brute_force_unrelated(rows, documents, condition_role, target_role):
    return {
        (condition, target)
        for i, j in itertools.product(range(len(documents)), repeat=2)
        if documents[i] != documents[j]
        for condition in rows[condition_role][i]
        for target in rows[target_role][j]
    }


def test_sampled_pairs_come_from_different_documents_and_are_reproducible():
    count = 60
    sources = [f"Source {i // 3}" for i in range(count)]  # three rows per document
    rows = {
        "source": [[s] for s in sources],
        "prediction": [[f"Output {i}"] for i in range(count)],
        "reference": [[f"Ref {i // 3}a", f"Ref {i // 3}b"] for i in range(count)],
    }
    documents = rescale.document_ids(count, sources, rows["reference"])
    assert len(set(documents)) == count // 3
    directions = rescale.POINT_DIRECTIONS
    sampled = rescale.sample_reference_pairs(rows, documents, directions, pairs=100, seed=42)
    assert len(sampled.samples) == 5  # faithfulness and precision share their copies
    assert sum(len(pairs) for pairs in sampled.samples.values()) <= 100
    document_of = {text: documents[i] for role in rows.values() for i, texts in enumerate(role) for text in texts}
    for direction, (unrelated, copy) in sampled.points_of.items():
        assert len(sampled.samples[unrelated]) == 20
        assert all(document_of[c] != document_of[t] for c, t in sampled.samples[unrelated]), direction
        condition_role, target_role = rescale.ROLES[direction]
        assert set(sampled.samples[unrelated]) <= brute_force_unrelated(rows, documents, condition_role, target_role)
        assert all(c == t for c, t in sampled.samples[copy]) and len(set(sampled.samples[copy])) == 20
    again = rescale.sample_reference_pairs(rows, documents, directions, pairs=100, seed=42)
    assert again.samples == sampled.samples and again.label == sampled.label
    other = rescale.sample_reference_pairs(rows, documents, directions, pairs=100, seed=1000)
    assert other.samples != sampled.samples and other.label != sampled.label
    # A budget that holds every pair takes them all: the means are then exact.
    whole = rescale.sample_reference_pairs(rows, documents, ["recall"], pairs=10**6)
    assert set(whole.samples[whole.points_of["recall"][0]]) == brute_force_unrelated(
        rows, documents, "prediction", "reference"
    )


@pytest.mark.slow
def test_rescaling_is_linear_and_keeps_every_ranking(copier):
    rng = random.Random(11)
    sources = [english_like_text(rng, rng.randint(8, 30)) for _ in range(14)]
    predictions = [english_like_text(rng, rng.randint(2, 15)) for _ in range(14)]
    references = [[english_like_text(rng, rng.randint(2, 15)) for _ in range(rng.randint(1, 2))] for _ in range(14)]
    result = copier.score_directions(predictions, references, sources, rescale="corpus")
    for direction in ("faithfulness", "precision", "recall"):
        raw, rescaled = np.array(result[direction]), np.array(result[f"{direction}_rescaled"])
        points = result["reference_points"][direction]
        slope = 1 / (points["copy"] - points["unrelated"])
        assert slope > 0
        np.testing.assert_allclose(rescaled, (raw - points["unrelated"]) * slope, rtol=0, atol=1e-12)
        humans = np.array([rng.random() for _ in raw])  # any judgements: the correlations with them do not move
        for correlation in (stats.spearmanr, stats.kendalltau):
            assert correlation(rescaled, humans).statistic == correlation(raw, humans).statistic, direction
            assert correlation(rescaled, raw).statistic == 1.0
    # Rescaled f_score: the mean of rescaled precision and rescaled recall; a copy's is 1 and an unrelated text's 0.
    mean = (np.array(result["precision_rescaled"]) + np.array(result["recall_rescaled"])) / 2
    np.testing.assert_allclose(result["f_score_rescaled"], mean, rtol=0, atol=1e-12)
    points = {d: result["reference_points"][d] for d in ("precision", "recall", "f_score")}
    for point in ("copy", "unrelated"):
        assert points["f_score"][point] == pytest.approx((points["precision"][point] + points["recall"][point]) / 2)


def test_rescaled_f_score_keeps_raw_f_scores_ranking_when_precision_and_recall_share_a_range():
    """The mean of rescaled precision and recall is linear in raw f_score when both directions have the same range
    (copy - unrelated), as with baselines made from plain texts; otherwise it weights them by 1 / range."""
    rng = np.random.default_rng(3)
    precision, recall = rng.normal(-3, 1, 50), rng.normal(-3, 1, 50)
    points = {
        "precision": rescale.ReferencePoints(unrelated=-5.0, copy=-1.0),
        "recall": rescale.ReferencePoints(unrelated=-4.5, copy=-0.5),
    }
    rescaled = rescale.rescaled_scores(
        {"precision": precision, "recall": recall, "f_score": (precision + recall) / 2}, points
    )
    humans = rng.random(50)
    for correlation in (stats.spearmanr, stats.kendalltau):
        assert correlation(rescaled["f_score"], humans).statistic == pytest.approx(
            correlation((precision + recall) / 2, humans).statistic, abs=1e-12
        )
    np.testing.assert_allclose(rescaled["f_score"], ((precision + recall) / 2 + 4.75) / 4, atol=1e-12)


@pytest.mark.slow
def test_system_comparisons_have_the_same_winners_and_p_values_when_rescaled(copier):
    rng = random.Random(5)
    sources = [english_like_text(rng, 20) for _ in range(10)]
    corpus = bart_score.Corpus(
        systems={name: [english_like_text(rng, rng.randint(2, 12)) for _ in sources] for name in "abc"},
        sources=sources,
    )
    per_system, _ = bart_score.score_corpus(copier, corpus, rescale="corpus")
    comparisons = bart_score.compare_directions(per_system)
    raw, rescaled = comparisons["faithfulness"], comparisons["faithfulness_rescaled"]
    assert [p["winner"] for p in rescaled["pairs"]] == [p["winner"] for p in raw["pairs"]]
    assert any(p["winner"] for p in raw["pairs"]) and not all(p["winner"] for p in raw["pairs"])
    for a, b in zip(raw["pairs"], rescaled["pairs"]):
        assert b["bootstrap_p"] == a["bootstrap_p"]
        assert b["t_test_p"] == pytest.approx(a["t_test_p"], rel=1e-9)


def test_reversed_reference_points_give_nan_and_say_why():
    points = {"faithfulness": rescale.ReferencePoints(unrelated=-3.0, copy=-4.0)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rescaled = rescale.rescaled_scores({"faithfulness": [-3.5, -2.0]}, points)
    assert np.isnan(rescaled["faithfulness"]).all()
    assert "faithfulness cannot be rescaled: a copy scores -4.0000 on average and an unrelated text -3.0000" in str(
        caught[0].message
    )


@pytest.mark.parametrize(
    "arguments, error, message",
    [
        (dict(rescale="bert"), ValueError, "rescale must be None, 'baseline' or 'corpus', got 'bert'"),
        (dict(rescale="corpus", baseline="b.json"), ValueError, "cannot be combined"),
        (dict(corpus_points=CorpusPoints(pairs=10)), ValueError, "corpus_points is for rescale='corpus' only"),
        (dict(rescale="baseline", corpus_points={"pairs": 10}), ValueError, "corpus_points is for rescale='corpus'"),
        (dict(rescale="corpus", corpus_points={"pairs": 0}), ValueError, "pairs must be a positive integer, got 0"),
        (dict(rescale="corpus", corpus_points={"seed": -1}), ValueError, "seed must be an integer of at least 0"),
        (
            dict(rescale="corpus", corpus_points={"unrelated_texts": "text"}),
            TypeError,
            "unrelated_texts must be a list of strings",
        ),
        (dict(rescale="corpus", corpus_points={"unrelated_texts": []}), ValueError, "unrelated_texts is empty"),
        (dict(rescale="corpus", corpus_points=3), TypeError, "corpus_points must be a CorpusPoints"),
        (dict(baseline=3), TypeError, "baseline must be a file path or a loaded baseline"),
        (dict(rescale_pairs=10), TypeError, r"unexpected options \['rescale_pairs'\]"),
    ],
)
def test_rescaling_arguments_are_checked_before_any_scoring(scorer, monkeypatch, arguments, error, message):
    monkeypatch.setattr(scorer, "score", None)  # would fail if reached
    with pytest.raises(error, match=message):
        scorer.score_directions(PREDICTIONS, sources=SOURCES, **arguments)


class PlainScorer:
    """A Scorer (bart_score.scoring.protocols) and no more, as meta-eval's view of a configuration is: every pair scores
    -1."""

    model_label = "plain"
    options = bart_score.EngineOptions()

    def signature_fields(self):
        return ["version:test"]

    def score(self, conditions, targets, batch_size=None, *, max_tokens=None, show_progress=False, **per_pair):
        return [-1.0] * len(conditions)


def test_a_scorer_without_a_model_identity_scores_but_is_refused_baseline_rescaling():
    plain = PlainScorer()
    assert not isinstance(plain, IdentifiedScorer)
    result = score_directions(plain, PREDICTIONS, references=REFERENCES, sources=SOURCES, rescale="corpus")
    assert result["faithfulness"] == [-1.0] * len(PREDICTIONS)
    assert result["signature"].startswith("ckpt:plain|dirs:faithfulness+precision+recall+f_score|agg:mean|nrefs:1-2|")
    with pytest.raises(
        InputTypeError, match=r"rescale='baseline' needs a scorer that names its model.*PlainScorer"
    ) as refused:
        score_directions(plain, PREDICTIONS, sources=SOURCES, rescale="baseline")
    assert (refused.value.option, refused.value.value) == ("rescale", "baseline")
    assert Mention("rescale", "baseline") in refused.value.parts


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")
def test_metric_passes_rescaling_through(copying_checkpoint, copier):
    metric = evaluate.load(MODULE, copying_checkpoint, device="cpu")
    result = metric.compute(predictions=PREDICTIONS, references=REFERENCES, sources=SOURCES, rescale="corpus")
    expected = copier.score_directions(PREDICTIONS, REFERENCES, SOURCES, rescale="corpus")
    assert set(result) == set(expected)
    for key in ("faithfulness_rescaled", "f_score_rescaled"):
        assert result[key] == pytest.approx(expected[key], abs=1e-6)
    assert result["signature"] == expected["signature"]
    with pytest.raises(ValueError, match="corpus_points is for rescale='corpus' only"):
        metric.compute(predictions=PREDICTIONS, sources=SOURCES, corpus_points={"pairs": 3})
    for arguments, message in (
        (dict(rescale="corpus", rescale_with_baseline=True), "bert_score's name for rescale='baseline'"),
        (dict(rescale="corpus", baseline_path="b.json"), "cannot be combined"),
        (dict(rescale_with_baseline="yes"), "rescale_with_baseline must be True or False, got a str"),
        (dict(baseline_path="a.json", baseline="b.json"), "baseline_path is bert_score's name for baseline"),
    ):
        with pytest.raises((ValueError, TypeError), match=message):  # bert_score's names, in the metric only
            metric.compute(predictions=PREDICTIONS, sources=SOURCES, **arguments)
    assert metric.compute(predictions=PREDICTIONS, sources=SOURCES)["faithfulness"]  # nothing left pending


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")
def test_score_dataset_refuses_corpus_rescaling_and_adds_rescaled_columns_from_a_baseline(copier, tmp_path):
    import datasets

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(SOURCES + PREDICTIONS) + "\n", encoding="utf-8")
    path = str(tmp_path / "baseline.json")
    bart_score.write_baseline(
        build_baseline(copier, texts=SOURCES + PREDICTIONS, corpus_file=str(texts), pairs=40), path
    )
    dataset = datasets.Dataset.from_dict({"prediction": PREDICTIONS, "source": SOURCES})
    with pytest.raises(ValueError, match="each batch reference points of its own"):
        bart_score.score_dataset(dataset, copier, sources="source", rescale="corpus")
    scored = bart_score.score_dataset(dataset, copier, sources="source", baseline=path, rows_per_batch=2)
    expected = copier.score_directions(PREDICTIONS, sources=SOURCES, baseline=path)
    assert scored["bartscore_faithfulness_rescaled"] == pytest.approx(expected["faithfulness_rescaled"], abs=1e-5)
    assert statistics.fmean(scored["bartscore_faithfulness"]) == pytest.approx(expected["faithfulness_mean"], abs=1e-5)


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
