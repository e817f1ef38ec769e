"""Benchmark records scored as the release's scripts score them, against the simple per-example reference: the
paper's direction per benchmark, F per reference then the max over references for data-to-text, the mean for
summarization, Moses detokenization for summarization and data-to-text only."""

import numpy as np
import pytest
from support.meta_eval_fixtures import BAGEL, KK_EN, SUMMEVAL
from support.reference import reference_score

from bart_score.meta_eval.scoring import moses_detokenizer, score_benchmarks
from bart_score.options import ScoringOptions

TOLERANCE = 1e-5


def detokenized(text):
    """What Moses makes of the fixtures' texts, whose only detached punctuation is a final " ."."""
    return text.replace(" .", ".")


@pytest.mark.slow
def test_moses_detokenization_of_the_release_texts():
    detokenize = moses_detokenizer()
    assert detokenize("The cat 's mat , he said .") == "The cat's mat, he said."
    for record in SUMMEVAL.values():
        for text in [record["src"], *record["ref_summs"], *(s["sys_summ"] for s in record["sys_summs"].values())]:
            assert detokenize(text) == detokenized(text)


@pytest.mark.slow
def test_scores_follow_the_release_scripts(scorer, reference_model, benchmark_data):
    model, tokenizer = reference_model

    def score(source, target):
        return reference_score(model, tokenizer, source, target)

    scores, signatures = score_benchmarks(scorer, benchmark_data)

    # SummEval: faithfulness, source -> summary, both detokenized.
    expected = [
        score(detokenized(record["src"]), detokenized(output["sys_summ"]))
        for record in SUMMEVAL.values()
        for output in record["sys_summs"].values()
    ]
    assert set(scores["summeval"]) == {"faithfulness"}
    assert np.max(np.abs(scores["summeval"]["faithfulness"] - expected)) < TOLERANCE

    # Data-to-text: F per reference, the best reference's, texts detokenized.
    expected = []
    for record in BAGEL.values():
        hypothesis = detokenized(record["sys_summ"])
        per_reference = [
            (score(detokenized(ref), hypothesis) + score(hypothesis, detokenized(ref))) / 2
            for ref in record["ref_summs"]
        ]
        expected.append(max(per_reference))
    assert np.max(np.abs(scores["bagel"]["f_score"] - expected)) < TOLERANCE

    # WMT19: F against the one reference, texts as they are.
    expected = []
    for record in KK_EN.values():
        for side in ("better", "worse"):
            hypothesis = record[side]["sys"]
            expected.append((score(record["ref"], hypothesis) + score(hypothesis, record["ref"])) / 2)
    assert np.max(np.abs(scores["wmt19-kk-en"]["f_score"] - expected)) < TOLERANCE

    assert "agg:max|nrefs:2-3" in signatures["bagel"] and "dirs:f_score" in signatures["bagel"]
    assert "dirs:faithfulness" in signatures["summeval"]


@pytest.mark.slow
def test_options_apply_to_every_benchmark(scorer, reference_model, benchmark_data):
    model, tokenizer = reference_model
    summeval = {"summeval": benchmark_data["summeval"]}
    scores, signatures = score_benchmarks(
        scorer, summeval, directions=["precision", "recall"], aggregation="max", detokenize=False
    )
    expected = [
        max(reference_score(model, tokenizer, ref, output["sys_summ"]) for ref in record["ref_summs"])
        for record in SUMMEVAL.values()
        for output in record["sys_summs"].values()
    ]
    assert set(scores["summeval"]) == {"precision", "recall"}
    assert np.max(np.abs(scores["summeval"]["precision"] - expected)) < TOLERANCE
    assert "agg:max" in signatures["summeval"]


def test_aggregation_has_one_source_the_options(scorer, benchmark_data):
    """An options object's aggregation applies to every benchmark (it was once overridden by a keyword of its own);
    aggregation=None, the default of the keywords, is the release's for each benchmark."""
    bagel = {"bagel": benchmark_data["bagel"]}
    release, release_signatures = score_benchmarks(scorer, bagel, detokenize=False)
    given, given_signatures = score_benchmarks(scorer, bagel, ScoringOptions(aggregation=None), detokenize=False)
    mean, mean_signatures = score_benchmarks(scorer, bagel, ScoringOptions(aggregation="mean"), detokenize=False)
    assert "agg:max" in release_signatures["bagel"] and given_signatures == release_signatures
    assert list(given["bagel"]["f_score"]) == list(release["bagel"]["f_score"])
    assert "agg:mean" in mean_signatures["bagel"]
    assert all(m <= r for m, r in zip(mean["bagel"]["f_score"], release["bagel"]["f_score"]))  # a mean is at most a max
    assert any(m < r for m, r in zip(mean["bagel"]["f_score"], release["bagel"]["f_score"]))


@pytest.mark.slow
def test_the_pairs_are_planned_without_scoring_and_the_results_come_from_their_scores(scorer, benchmark_data):
    """plan_benchmarks reads only the scorer's identity; benchmark_results from the planned calls' scores is what
    score_benchmarks gives."""
    from bart_score.meta_eval.scoring import benchmark_results, plan_benchmarks
    from bart_score.scoring._pair_groups import call_scores

    class IdentityOnly:  # no score(): planning must not score
        model_label, options = scorer.model_label, scorer.options

        def signature_fields(self):
            return scorer.signature_fields()

    plan = plan_benchmarks(IdentityOnly(), benchmark_data, detokenize=False)
    assert len(plan.requests) == 2  # faithfulness (SummEval), f_score (BAGEL and WMT19)
    scores = [call_scores(scorer, request.plan.call, request.plan.options) for request in plan.requests]
    results, signatures = benchmark_results(plan, scores)
    expected, expected_signatures = score_benchmarks(scorer, benchmark_data, detokenize=False)
    assert signatures == expected_signatures
    assert {name: {d: list(v) for d, v in by.items()} for name, by in results.items()} == {
        name: {d: list(v) for d, v in by.items()} for name, by in expected.items()
    }
