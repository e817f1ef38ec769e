"""The meta-evaluation protocol against a deliberately simple re-implementation of the release's analysis.py (plain
loops over the release's pickled dict layouts, as its SUMStat, D2TStat and WMTStat walk them), on synthetic score
files in those layouts; and on the release's own score files (final_p.pkl) where a checkout is at hand."""

import functools
import os
import pickle
import random

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr
from support.fast_subset import fast_cases
from support.release_analysis import reference_accuracy, reference_kendall_like, reference_summary_level

from bart_score.messages import Mention
from bart_score.meta_eval import protocol as meta_eval

TOLERANCE = 1e-9
METRICS = ("m_a", "m_b", "m_c")
# The release runs 1000 rounds; fewer (the first ones are the same subsets) keep the loop reference quick.
ROUNDS = 50


# ---------------------------------------------------------------------------------------------------------------------
# synthetic score files in the release's layouts


def summaries_file(seed=1, documents=20, systems=6):
    """SUM layout, as final_p.pkl: human and metric scores side by side. Some documents have a constant metric or a
    constant human score (the protocol skips them), and some metric values tie."""
    draw = random.Random(seed)
    data = {}
    for doc in range(documents):
        sys_summs = {}
        for system in range(systems):
            coherence = float(draw.choice([1, 2, 3, 4, 5])) + round(draw.random(), 1)
            scores = {
                "coherence": coherence,
                "fluency": 4.0 if doc % 7 == 0 else float(draw.choice([3, 4, 5])),
                "m_a": coherence + draw.gauss(0, 1.0),
                "m_b": 0.5 if doc % 5 == 0 else round(coherence + draw.gauss(0, 1.5), 1),
                "m_c": round(draw.random(), 1),
            }
            sys_summs[f"M{system}"] = {"sys_summ": f"summary {doc} {system}", "scores": scores}
        data[f"doc-{doc}"] = {"src": f"source {doc}", "ref_summ": f"reference {doc}", "sys_summs": sys_summs}
    return data


def rank19_file(seed=2, documents=50):
    draw = random.Random(seed)
    data = {}
    for doc in range(documents):
        correct = {"fact": 1, "m_a": draw.random() + 0.2, "m_b": draw.random(), "m_c": draw.choice([0.1, 0.2])}
        incorrect = {"fact": 0, "m_a": draw.random(), "m_b": draw.random(), "m_c": draw.choice([0.1, 0.2])}
        data[doc] = {
            "src": f"source {doc}",
            "ref_summ": f"source {doc}",
            "sys_summs": {
                "correct": {"sys_summ": "right", "scores": correct},
                "incorrect": {"sys_summ": "wrong", "scores": incorrect},
            },
        }
    return data


def qags_file(seed=3, documents=60):
    draw = random.Random(seed)
    data = {}
    for doc in range(documents):
        fact = draw.choice([0.0, 1 / 3, 2 / 3, 1.0])
        scores = {
            "fact": fact,
            "m_a": fact + draw.gauss(0, 0.4),
            "m_b": fact + draw.gauss(0, 0.5),
            "m_c": draw.random(),
        }
        data[doc] = {"src": "s", "ref_summ": "s", "sys_summs": {0: {"sys_summ": "h", "scores": scores}}}
    return data


def data_to_text_file(seed=4, documents=80):
    draw = random.Random(seed)
    data = {}
    for doc in range(documents):
        quality = float(draw.choice([1, 2, 3, 4, 5, 6]))
        scores = {
            "informativeness": quality,
            "naturalness": float(draw.choice([2, 4])),
            "quality": quality,
            "m_a": quality + draw.gauss(0, 2),
            "m_b": round(quality + draw.gauss(0, 2.2)),
            "m_c": draw.random(),
        }
        data[doc] = {"src": "inform(name=X)", "sys_summ": "X is here .", "ref_summs": ["X ."], "scores": scores}
    return data


def darr_file(seed=5, documents=200):
    """WMT layout: scores are strings, as the release stores them; every tenth pair is a tie for m_b."""
    draw = random.Random(seed)
    data = {}
    for doc in range(documents):
        better, worse = draw.random(), draw.random()
        tie = doc % 10 == 0
        data[doc] = {
            "src": "Quelle",
            "ref": "Reference",
            "better": {
                "sys_name": "A",
                "sys": "x",
                "scores": {"m_a": str(better + 0.15), "m_b": str(0.5 if tie else better), "m_c": str(draw.random())},
            },
            "worse": {
                "sys_name": "B",
                "sys": "y",
                "scores": {"m_a": str(worse), "m_b": str(0.5 if tie else worse), "m_c": str(draw.random())},
            },
        }
    return data


# ---------------------------------------------------------------------------------------------------------------------
# the reference: analysis.py's significance rounds as plain loops over the dicts (its measures are in
# support/release_analysis.py)


def reference_wins(data, measure, rounds=ROUNDS):
    """sig_test_two's rounds: seed 666, one list reshuffled each round, its first 80%; `measure(subset)` gives the two
    metrics' measures on the subset. Returns how often the first is strictly higher."""
    state = random.getstate()
    random.seed(666)
    doc_ids = list(data.keys())
    better = 0
    for _ in range(rounds):
        random.shuffle(doc_ids)
        first, second = measure(doc_ids[: int(0.8 * len(doc_ids))])
        if first > second:
            better += 1
    random.setstate(state)
    return better


def summary_round(data, m1, m2, human):
    @functools.cache  # a document's correlation is the same in every round
    def correlation(doc, metric):
        """Spearman of the document's human and metric scores; None where either is constant."""
        scores = [system["scores"] for system in data[doc]["sys_summs"].values()]
        target, prediction = [s[human] for s in scores], [s[metric] for s in scores]
        if len(set(prediction)) == 1 or len(set(target)) == 1:
            return None
        return spearmanr(target, prediction)[0]

    def measure(subset):
        corr1, corr2 = [], []
        for doc in subset:
            first, second = correlation(doc, m1), correlation(doc, m2)
            if first is None or second is None:
                continue
            corr1.append(first)
            corr2.append(second)
        return np.mean(corr1), np.mean(corr2)

    return measure


def accuracy_round(data, m1, m2):
    def measure(subset):
        counts = []
        for metric in (m1, m2):
            count = 0
            for doc in subset:
                systems = data[doc]["sys_summs"]
                if systems["correct"]["scores"][metric] > systems["incorrect"]["scores"][metric]:
                    count += 1
            counts.append(count)
        return counts

    return measure


def single_round(data, m1, m2, correlation, human, scores_of):
    def measure(subset):
        truth = [scores_of(data[doc])[human] for doc in subset]
        return tuple(correlation(truth, [scores_of(data[doc])[m] for doc in subset])[0] for m in (m1, m2))

    return measure


def kendall_round(data, m1, m2):
    def measure(subset):
        return tuple(reference_kendall_like({doc: data[doc] for doc in subset}, m) for m in (m1, m2))

    return measure


# ---------------------------------------------------------------------------------------------------------------------
# records, as the loaders lay them out: one per scored text


def summary_records(data, human, metrics=METRICS):
    doc_ids, truth, scores = [], [], {m: [] for m in metrics}
    for doc, record in data.items():
        for output in record["sys_summs"].values():
            doc_ids.append(str(doc))
            truth.append(output["scores"][human])
            for metric in metrics:
                scores[metric].append(output["scores"][metric])
    return doc_ids, truth, scores


def data_to_text_records(data, human):
    doc_ids = [str(doc) for doc in data]
    return (
        doc_ids,
        [r["scores"][human] for r in data.values()],
        {m: [r["scores"][m] for r in data.values()] for m in METRICS},
    )


def darr_records(data):
    doc_ids, truth, scores = [], [], {m: [] for m in METRICS}
    for doc, record in data.items():
        for side, judged in (("better", 1.0), ("worse", 0.0)):
            doc_ids.append(str(doc))
            truth.append(judged)
            for metric in METRICS:
                scores[metric].append(float(record[side]["scores"][metric]))
    return doc_ids, truth, scores


def significance_by_pair(protocol, doc_ids, truth, scores, rounds=ROUNDS):
    tests, best = meta_eval.significance(protocol, doc_ids, truth, scores, rounds=rounds)
    return {(t["a"], t["b"]): t for t in tests}, best


# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("human", fast_cases(["coherence", "fluency"], ["fluency"]))
def test_summary_level_correlations_and_significance(human):
    data = summaries_file()
    doc_ids, truth, scores = summary_records(data, human)
    for metric in METRICS:
        got = meta_eval.correlate("summary_level", doc_ids, truth, scores[metric])
        expected = reference_summary_level(data, human, metric)
        assert abs(got["spearman"] - expected[0]) < TOLERANCE
        assert abs(got["kendall"] - expected[1]) < TOLERANCE
        assert abs(got["pearson"] - expected[2]) < TOLERANCE
        assert got["documents"] == expected[3]
    # m_b is constant on every fifth document: the protocol skips those documents
    assert meta_eval.correlate("summary_level", doc_ids, truth, scores["m_b"])["documents"] <= len(data) * 0.8
    tests, _ = significance_by_pair("summary_level", doc_ids, truth, scores)
    for (first, second), test in tests.items():
        assert test["wins"] == reference_wins(data, summary_round(data, first, second, human))


@pytest.mark.slow
def test_rank19_accuracy_and_significance():
    data = rank19_file()
    doc_ids, truth, scores = summary_records(data, "fact")
    for metric in METRICS:
        got = meta_eval.correlate("pairwise_accuracy", doc_ids, truth, scores[metric])
        assert abs(got["accuracy"] - reference_accuracy(data, metric)) < TOLERANCE
    tests, _ = significance_by_pair("pairwise_accuracy", doc_ids, truth, scores, rounds=1000)
    for (first, second), test in tests.items():
        assert test["wins"] == reference_wins(data, accuracy_round(data, first, second), rounds=1000)


@pytest.mark.slow
def test_qags_pearson_and_significance():
    data = qags_file()
    doc_ids, truth, scores = summary_records(data, "fact")
    for metric in METRICS:
        got = meta_eval.correlate("pearson", doc_ids, truth, scores[metric])
        assert abs(got["pearson"] - pearsonr(truth, scores[metric])[0]) < TOLERANCE
    tests, _ = significance_by_pair("pearson", doc_ids, truth, scores)
    for (first, second), test in tests.items():
        measure = single_round(data, first, second, pearsonr, "fact", lambda r: r["sys_summs"][0]["scores"])
        assert test["wins"] == reference_wins(data, measure)


@pytest.mark.slow
def test_data_to_text_spearman_and_significance():
    data = data_to_text_file()
    doc_ids, truth, scores = data_to_text_records(data, "informativeness")
    for metric in METRICS:
        got = meta_eval.correlate("spearman", doc_ids, truth, scores[metric])
        loop_truth = [data[doc]["scores"]["informativeness"] for doc in data]
        loop_metric = [data[doc]["scores"][metric] for doc in data]
        assert abs(got["spearman"] - spearmanr(loop_truth, loop_metric)[0]) < TOLERANCE
        assert abs(got["kendall"] - kendalltau(loop_truth, loop_metric)[0]) < TOLERANCE
    # Each round on its own 80% of the documents (the release's D2T test keeps adding to its lists: see meta_eval).
    tests, _ = significance_by_pair("spearman", doc_ids, truth, scores)
    for (first, second), test in tests.items():
        measure = single_round(data, first, second, spearmanr, "informativeness", lambda r: r["scores"])
        assert test["wins"] == reference_wins(data, measure)


def test_wmt_kendall_like_counts_ties_as_discordant():
    data = darr_file()
    doc_ids, truth, scores = darr_records(data)
    for metric in METRICS:
        got = meta_eval.correlate("kendall_like", doc_ids, truth, scores[metric])
        assert abs(got["kendall_like"] - reference_kendall_like(data, metric)) < TOLERANCE
    # m_b ties on a tenth of the pairs: they count against it.
    ties = sum(1 for record in data.values() if record["better"]["scores"]["m_b"] == record["worse"]["scores"]["m_b"])
    assert ties == 20
    tests, _ = significance_by_pair("kendall_like", doc_ids, truth, scores)
    for (first, second), test in tests.items():
        assert test["wins"] == reference_wins(data, kendall_round(data, first, second))


def test_outcomes_and_best_follow_the_release_thresholds():
    data = summaries_file(documents=40)
    doc_ids, truth, scores = summary_records(data, "coherence")
    scores["m_copy"] = list(scores["m_a"])  # identical metrics never win against each other
    tests, best = significance_by_pair("summary_level", doc_ids, truth, scores)
    for test in tests.values():  # the release's thresholds, 950 and 50 of 1000 rounds, scaled to the rounds run
        assert test["outcome"] == (1 if test["wins"] > 47 else -1 if test["wins"] < 3 else 0)
    assert tests[("m_a", "m_copy")]["wins"] == 0 and tests[("m_a", "m_copy")]["outcome"] == -1
    beaten = {t["b"] if t["outcome"] == 1 else t["a"] for t in tests.values() if t["outcome"]}
    assert best == [m for m in scores if m not in beaten]


def test_bad_records_are_named():
    with pytest.raises(ValueError, match=r"scores\[1\] is nan") as raised:
        meta_eval.correlate("pearson", ["a", "b", "c"], [1, 2, 3], [0.1, float("nan"), 0.3])
    assert raised.value.option == "scores" and raised.value.parts[0] == Mention("scores", index=1)
    with pytest.raises(ValueError, match=r"document 'x' needs exactly two records"):
        meta_eval.correlate("kendall_like", ["x", "x", "x"], [1, 0, 0], [1, 2, 3])
    with pytest.raises(ValueError, match=r"human has 2 entries but doc_ids has 1") as raised:
        meta_eval.correlate("spearman", ["a"], [1, 2], [1, 2])
    assert raised.value.option == "human"
    with pytest.raises(ValueError, match=r"protocol must be one of") as raised:
        meta_eval.correlate("system_level", ["a"], [1], [1])
    assert (raised.value.option, raised.value.value) == ("protocol", "system_level")


# ---------------------------------------------------------------------------------------------------------------------
# the release's own score files, where a checkout is at hand

RELEASE_DIR = os.environ.get("BARTSCORE_RELEASE_DIR")
_SCORE_FILES = {
    "SUM/REALSumm/final_p.pkl": ("litepyramid_recall", "summary_level"),
    "SUM/SummEval/final_p.pkl": ("coherence", "summary_level"),
    "SUM/Newsroom/final_p.pkl": ("informativeness", "summary_level"),
    "SUM/Rank19/final_p.pkl": ("fact", "pairwise_accuracy"),
    "SUM/QAGS_CNN/final_p.pkl": ("fact", "pearson"),
}


@pytest.mark.parametrize("path", sorted(_SCORE_FILES))
def test_release_score_files(path):
    if not RELEASE_DIR:
        pytest.skip(reason="set BARTSCORE_RELEASE_DIR to a checkout of neulab/BARTScore to check its score files")
    full = os.path.join(RELEASE_DIR, path)
    if not os.path.isfile(full):
        pytest.skip(reason=f"{full} is not in this checkout (the release's score files are 4 MiB and more)")
    with open(full, "rb") as handle:
        data = pickle.load(handle)  # the release's own file, trusted here
    human, protocol = _SCORE_FILES[path]
    first = next(iter(data.values()))["sys_summs"]
    metrics = [m for m in next(iter(first.values()))["scores"] if m.startswith(("rouge1", "bart_score_cnn_"))][:4]
    doc_ids, truth, scores = summary_records(data, human, metrics)
    for metric in metrics:
        got = meta_eval.correlate(protocol, doc_ids, truth, scores[metric])
        if protocol == "summary_level":
            assert abs(got["spearman"] - reference_summary_level(data, human, metric)[0]) < TOLERANCE
        elif protocol == "pairwise_accuracy":
            assert abs(got["accuracy"] - reference_accuracy(data, metric)) < TOLERANCE
        else:
            assert abs(got["pearson"] - pearsonr(truth, scores[metric])[0]) < TOLERANCE


def test_the_text_table_keeps_a_space_between_benchmark_titles():
    """Each benchmark title in a table's heading stands apart, however long it is against its columns (QAGS-XSUM
    is as wide as its one column)."""
    from bart_score.meta_eval._correlation_table import Column, MetricRow, render

    names = ("rank19", "qags-cnn", "qags-xsum")
    columns = [Column(f"{name}/factuality", "5", name, "factuality") for name in names]
    row = MetricRow("BARTScore tiny", "bartscore")
    row.values = {column.key: {} for column in columns}
    report = {
        "rows": [{"name": row.name, "values": {c.key: {"value": 0.5} for c in columns}, "paper": {}, "difference": {}}],
        "significance": {},
        "published_not_placed": [],
    }
    heading = render(report, columns, [row]).splitlines()
    titles = heading[heading.index(next(line for line in heading if line.startswith("Table 5"))) + 1]
    assert titles.split() == ["Rank19", "QAGS-CNN", "QAGS-XSUM"]


def test_a_published_row_computed_nowhere_says_what_would_compute_it_in_the_callers_words(benchmark_data):
    """The library names a variant and prompt set, or a metrics row named as the release names it; a front end says
    the same in its own words (the command line's -m, --prompt and --metrics-csv)."""
    from bart_score.meta_eval._correlation_table import MetricRow, build_report, how_to_compute_here
    from bart_score.meta_eval.published import Published

    datasets = {"summeval": benchmark_data["summeval"]}
    row = MetricRow("BARTScore tiny", "bartscore", scores={"summeval": [0.0] * datasets["summeval"].num_rows})
    report, _ = build_report(datasets, [row], with_significance=False)
    notes = {entry["name"]: entry["note"] for entry in report["rows"]}
    assert notes["BARTScore+CNN (paper)"] == "paper only: not run here; score variant 'cnn'"
    assert notes["BERTScore (paper)"] == "paper only: give its scores as a MetricRow of origin 'metrics-csv' to compare"
    prompted = Published("summeval/coherence", "BARTScore+CNN+Prompt", 0.5, "Table 4", variant="cnn", prompt="summary")
    assert how_to_compute_here(prompted) == "not run here; score variant 'cnn' with prompt 'summary'"
    named = Published("realsumm/litepyramid_recall", "ROUGE-1", 0.5, "Table 4", release_key="rouge1_r")
    assert (
        how_to_compute_here(named)
        == "give its scores as a MetricRow of origin 'metrics-csv' named 'rouge1_r' to compare"
    )

    asked = []
    report, _ = build_report(
        datasets,
        [row],
        how_to_compute=lambda entry: asked.append(entry.metric) or f"ask for {entry.metric}",
        with_significance=False,
    )
    notes = {entry["name"]: entry["note"] for entry in report["rows"]}
    assert notes["BERTScore (paper)"] == "paper only: ask for BERTScore"
    assert {"BARTScore+CNN", "BERTScore"} <= set(asked)
