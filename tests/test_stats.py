"""System comparison statistics on constructed data where the answer is known."""

import numpy as np
import pytest

import bart_score


def test_a_system_better_on_every_segment_wins():
    rng = np.random.default_rng(0)
    base = rng.normal(-3, 1, size=50)
    result = bart_score.compare_systems({"good": base + 0.5, "bad": base})
    (pair,) = result["pairs"]
    assert pair["winner"] == "good" and pair["delta"] == pytest.approx(0.5)
    assert pair["bootstrap_p"] < 0.01 and pair["t_test_p"] == 0.0 and pair["t_statistic"] == np.inf


def test_identical_systems_tie():
    scores = list(np.random.default_rng(1).normal(-3, 1, size=40))
    (pair,) = bart_score.compare_systems({"a": scores, "b": list(scores)})["pairs"]
    assert pair["winner"] is None and pair["bootstrap_p"] == 1.0 and pair["t_test_p"] == 1.0


def test_a_few_segments_that_agree_in_sign_are_not_enough_for_a_winner():
    (pair,) = bart_score.compare_systems({"a": [-1.0, -2.0, -1.5], "b": [-1.2, -2.1, -2.9]})["pairs"]
    assert pair["bootstrap_p"] < 0.01  # every resample agrees in sign: the bootstrap alone would call it
    assert pair["t_test_p"] > 0.05 and pair["winner"] is None


@pytest.mark.slow
def test_the_winner_rule_keeps_false_alarms_near_alpha_on_small_corpora():
    rng = np.random.default_rng(3)
    trials = 400
    false_alarms = sum(
        bool(
            bart_score.compare_systems({"a": rng.normal(size=5), "b": rng.normal(size=5)}, resamples=200, seed=trial)[
                "pairs"
            ][0]["winner"]
        )
        for trial in range(trials)
    )
    assert false_alarms / trials <= 0.08, false_alarms  # the bootstrap alone: about 15% on 5 segments


def test_confidence_interval_brackets_the_mean_and_is_reproducible():
    scores = {"a": np.random.default_rng(2).normal(-2, 1, size=200)}
    first = bart_score.compare_systems(scores)
    (system,) = first["systems"]
    assert system["ci_low"] < system["mean"] < system["ci_high"]
    # about 1.96 standard errors either side
    assert system["ci_high"] - system["ci_low"] == pytest.approx(2 * 1.96 / np.sqrt(200), rel=0.25)
    assert bart_score.compare_systems(scores) == first


@pytest.mark.parametrize(
    "t,degrees,p",
    [
        (2.228, 10, 0.05),
        (3.169, 10, 0.01),
        (1.96, 100000, 0.05),
        (2.0, 1, 0.2952),
        (12.706, 1, 0.05),
    ],
)
def test_t_test_p_values_match_the_t_table(t, degrees, p):
    # a sample of differences with exactly this t statistic: mean t*s/sqrt(n), standard deviation s
    n = degrees + 1
    unit = np.array([1.0, -1.0] * (n // 2) + [0.0] * (n % 2))
    unit /= unit.std(ddof=1)
    differences = unit + t / np.sqrt(n)
    statistic, p_value = bart_score.paired_t_test(differences, np.zeros(n))
    assert statistic == pytest.approx(t)
    assert p_value == pytest.approx(p, abs=2e-4)


def test_mismatched_segment_counts_are_refused():
    with pytest.raises(ValueError, match=r"same, non-zero number of segments"):
        bart_score.compare_systems({"a": [1.0, 2.0], "b": [1.0]})


def test_a_single_segment_is_no_evidence():
    (pair,) = bart_score.compare_systems({"a": [-1.0], "b": [-2.0]})["pairs"]
    assert np.isnan(pair["bootstrap_p"]) and np.isnan(pair["t_test_p"]) and pair["winner"] is None


@pytest.mark.parametrize("resamples", [0, 100_001, 10**12, 2.5, True])
def test_resamples_are_bounded(resamples):
    with pytest.raises(ValueError, match=r"resamples must be an integer from 1 to 100,000"):
        bart_score.compare_systems({"a": [1.0, 2.0], "b": [2.0, 3.0]}, resamples=resamples)


def _is_nan(value):
    return isinstance(value, float) and np.isnan(value)


@pytest.mark.parametrize("position", [0, 7, 39])
def test_a_nan_score_leaves_its_system_and_each_of_its_pairs_undefined(position):
    rng = np.random.default_rng(4)
    good = rng.normal(-2, 1, size=40)
    broken = good + 1.0  # better on every segment, but for one NaN
    broken[position] = np.nan
    other = good - 0.3
    result = bart_score.compare_systems({"broken": broken, "good": good, "other": other}, resamples=500)
    systems = {s["system"]: s for s in result["systems"]}
    assert all(_is_nan(systems["broken"][key]) for key in ("mean", "ci_low", "ci_high"))
    for pair in result["pairs"][:2]:  # broken vs good, broken vs other
        assert "broken" in (pair["system_a"], pair["system_b"])
        assert all(_is_nan(pair[key]) for key in ("delta", "bootstrap_p", "t_statistic", "t_test_p"))
        assert pair["winner"] is None
    # the pair without NaN is unaffected: the same figures as comparing those two systems alone
    alone = bart_score.compare_systems({"good": good, "other": other}, resamples=500)
    assert result["pairs"][2] == alone["pairs"][0] and alone["pairs"][0]["winner"] == "good"
    assert [s for s in result["systems"] if s["system"] != "broken"] == alone["systems"]


def test_nan_scores_in_both_systems_give_no_p_value_rather_than_the_smallest():
    # every resampled difference is NaN: counted as neither side, the bootstrap would give its minimum, 2/1001
    (pair,) = bart_score.compare_systems({"a": [np.nan] * 5, "b": [np.nan] * 5})["pairs"]
    assert all(_is_nan(pair[key]) for key in ("delta", "bootstrap_p", "t_statistic", "t_test_p"))
    assert pair["winner"] is None


def test_an_undefined_difference_is_nan_too():
    # +inf in both systems: each mean is +inf, their difference inf - inf is undefined
    a, b = [-1.0, np.inf, -2.0, -1.5], [-3.0, np.inf, -4.0, -3.5]
    (pair,) = bart_score.compare_systems({"a": a, "b": b})["pairs"]
    assert all(_is_nan(pair[key]) for key in ("delta", "bootstrap_p", "t_statistic", "t_test_p"))
    assert pair["winner"] is None


@pytest.mark.parametrize("a, b", [([1.0, np.nan, 2.0], [0.0, 1.0, 1.0]), ([1.0, 2.0, 3.0], [np.nan] * 3)])
def test_the_t_test_is_nan_when_a_difference_is(a, b):
    statistic, p_value = bart_score.paired_t_test(a, b)
    assert np.isnan(statistic) and np.isnan(p_value)


def test_compare_output_names_nan_scores_instead_of_a_tie():
    from bart_score.cli.compare import comparison_lines
    from bart_score.corpora._outputs import finite_or_null

    comparisons = {"faithfulness": bart_score.compare_systems({"a": [np.nan, 1.0, 2.0], "b": [0.0, 0.5, 1.0]})}
    text = "\n".join(comparison_lines(comparisons, 3, "SIG"))
    assert "none (NaN)" in text and " tie" not in text and "0.0020" not in text
    assert "note: a has NaN scores in faithfulness" in text
    assert text.index("  b  ") < text.index("  a  ")  # the defined mean is listed first
    written = finite_or_null(comparisons)["faithfulness"]["pairs"][0]
    assert written["delta"] is None and written["bootstrap_p"] is None and written["winner"] is None
