"""`bartscore meta-eval` end to end on a tiny model and fixture benchmarks in the release's layouts: the table and
files against an independent computation, resuming from the score cache, a missing checkpoint, usage errors, and
torchrun."""

import copy
import csv
import json
import os
import time

import pytest
from scipy.stats import spearmanr
from support.cli import run_cli
from support.meta_eval_fixtures import BAGEL, KK_EN, SUMMEVAL, write_fixture_files
from support.reference import reference_score
from support.release_analysis import reference_kendall_like, reference_summary_level

from bart_score.cli import main
from bart_score.meta_eval._correlation_table import CSV_FIELDS

BENCHMARKS = ("summeval", "bagel", "wmt19-kk-en")
TOLERANCE = 1e-4  # correlations of scores that agree with the reference to 1e-5


def length_metric_rows():
    """A metric for the CSV: the hypothesis's length in words, per record, keyed as the loaders key records."""
    rows = []
    for doc_id, record in SUMMEVAL.items():
        for system, output in record["sys_summs"].items():
            rows.append(("summeval", doc_id, system, len(output["sys_summ"].split())))
    for doc_id, record in BAGEL.items():
        rows.append(("bagel", str(doc_id), "", len(record["sys_summ"].split())))
    for doc_id, record in KK_EN.items():
        for side in ("better", "worse"):
            rows.append(("wmt19-kk-en", str(doc_id), record[side]["sys_name"], len(record[side]["sys"].split())))
    return rows


def write_metrics_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["benchmark", "doc_id", "system", "length"])
        writer.writerows(rows)
    return str(path)


def command(folder, tiny_checkpoint, *extra):
    paths = write_fixture_files(folder)
    data = [arg for name in BENCHMARKS for arg in ("--data", f"{name}={paths[name]}")]
    metrics = write_metrics_csv(folder / "metrics.csv", length_metric_rows())
    return ["meta-eval", "-b", *BENCHMARKS, "-m", tiny_checkpoint, *data, "--metrics-csv", metrics, "-q", *extra]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, tiny_checkpoint):
    folder = tmp_path_factory.mktemp("meta-eval")
    args = command(folder, tiny_checkpoint, "-o", str(folder / "out" / "table"))
    code, stdout, stderr = run_cli(*args)
    assert code == 0, stderr
    return folder, args, stdout, stderr


def with_scores(data, layout, scores):
    """A copy of a fixture file with a metric's scores added to its records, as the release's score files hold them."""
    data = copy.deepcopy(data)
    values = iter(scores)
    for record in data.values():
        if layout == "summaries":
            for output in record["sys_summs"].values():
                output["scores"]["metric"] = next(values)
        elif layout == "data-to-text":
            record["scores"]["metric"] = next(values)
        else:
            for side in ("better", "worse"):
                record[side]["scores"]["metric"] = str(next(values))
    return data


def expected_measures(bart_scores, lengths):
    """Each benchmark's measures for BARTScore and the length metric, by the plain-loop reference protocol."""
    expected = {}
    for name, metric in (("bartscore", bart_scores), ("length", lengths)):
        summeval = with_scores(SUMMEVAL, "summaries", metric["summeval"])
        for aspect in ("coherence", "consistency", "fluency", "relevance"):
            expected[name, f"summeval/{aspect}"] = reference_summary_level(summeval, aspect, "metric")[0]
        bagel = with_scores(BAGEL, "data-to-text", metric["bagel"])
        for aspect in ("informativeness", "naturalness", "quality"):
            truth = [record["scores"][aspect] for record in bagel.values()]
            expected[name, f"bagel/{aspect}"] = spearmanr(truth, [r["scores"]["metric"] for r in bagel.values()])[0]
        kk_en = with_scores(KK_EN, "darr", metric["wmt19-kk-en"])
        expected[name, "wmt19-kk-en/darr"] = reference_kendall_like(kk_en, "metric")
    return expected


def reference_bart_scores(model, tokenizer):
    def score(source, target):
        return reference_score(model, tokenizer, source.replace(" .", "."), target.replace(" .", "."))

    def f(ref, hyp):
        return (score(ref, hyp) + score(hyp, ref)) / 2

    return {
        "summeval": [score(r["src"], o["sys_summ"]) for r in SUMMEVAL.values() for o in r["sys_summs"].values()],
        "bagel": [max(f(ref, r["sys_summ"]) for ref in r["ref_summs"]) for r in BAGEL.values()],
        # WMT texts are scored as they are
        "wmt19-kk-en": [
            (
                reference_score(model, tokenizer, r["ref"], r[side]["sys"])
                + reference_score(model, tokenizer, r[side]["sys"], r["ref"])
            )
            / 2
            for r in KK_EN.values()
            for side in ("better", "worse")
        ],
    }


@pytest.mark.slow
def test_the_table_and_files_match_an_independent_computation(first_run, reference_model, tiny_checkpoint):
    folder, _, stdout, stderr = first_run
    name = os.path.basename(tiny_checkpoint)
    for title in ("Table 3:", "Table 4:", "Table 6:"):
        assert title in stdout
    assert f"BARTScore {name}  " in stdout and "length" in stdout
    assert "BARTScore+CNN (paper)" in stdout and "0.448" in stdout  # the paper's SummEval coherence row
    with open(folder / "out" / "table.json", encoding="utf-8") as handle:
        report = json.load(handle)
    rows = {row["name"]: row for row in report["rows"]}
    ours, length = rows[f"BARTScore {name}"], rows["length"]
    assert ours["directions"] == {"summeval": "faithfulness", "bagel": "f_score", "wmt19-kk-en": "f_score"}

    lengths = {b: [value for bench, _, _, value in length_metric_rows() if bench == b] for b in BENCHMARKS}
    expected = expected_measures(reference_bart_scores(*reference_model), lengths)
    for (metric, column), value in expected.items():
        got = (ours if metric == "bartscore" else length)["values"][column]["value"]
        assert abs(got - value) < TOLERANCE, (metric, column, got, value)

    # Significance per column between the two metrics; the CSV has one line per metric and column.
    assert set(report["significance"]) == {c["key"] for c in report["columns"] if c["benchmark"]}
    with open(folder / "out" / "table.csv", encoding="utf-8", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert list(lines[0]) == list(CSV_FIELDS)
    ours_lines = [line for line in lines if line["metric"] == f"BARTScore {name}"]
    assert len(ours_lines) == 8  # 4 SummEval aspects, 3 BAGEL aspects, kk-en
    coherence = next(line for line in lines if line["metric"] == "BARTScore+CNN (paper)")
    assert (coherence["column"], coherence["paper"], coherence["ours"]) == ("summeval/coherence", "0.448", "")
    assert "0 taken from" in stderr


@pytest.mark.slow
def test_a_rerun_resumes_from_the_cache_and_gives_the_same_table(in_process, first_run, tmp_path):
    folder, args, stdout, _ = first_run
    cache = folder / "out" / "scores-cache.jsonl"
    lines = cache.read_text(encoding="utf-8").splitlines()
    kept = lines[: len(lines) // 2]
    # As if the run had been stopped: half the scores kept, and a line cut short by the stop.
    cache.write_text("\n".join(kept) + "\n" + lines[len(lines) // 2][:25], encoding="utf-8")
    code, rerun, stderr = in_process(*args)
    assert code == 0, stderr
    assert rerun == stdout
    assert f"{len(lines) - len(kept)} pair(s) scored, {len(kept) - 1} taken from" in stderr
    assert "unfinished line" in stderr
    code, again, stderr = in_process(*args)
    assert code == 0 and again == stdout
    assert f"0 pair(s) scored, {len(lines) - 1} taken from" in stderr


@pytest.mark.slow
def test_a_missing_checkpoint_still_shows_the_papers_numbers(tmp_path):
    paths = write_fixture_files(tmp_path)
    empty_cache = tmp_path / "hf"
    empty_cache.mkdir()
    code, stdout, stderr = run_cli(
        "meta-eval", "-b", "summeval", "--data", f"summeval={paths['summeval']}", "-o", str(tmp_path / "t"), "-q",
        env={"HF_HUB_CACHE": str(empty_cache)},
    )  # fmt: skip
    assert code == 1
    assert "Cannot load the checkpoint 'facebook/bart-large-cnn'" in stderr
    assert "BARTScore cnn: not computed: the checkpoint could not be loaded" in stdout
    report = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    ours = report["rows"][0]
    assert ours["values"] == {} and ours["paper"]["summeval/coherence"]["value"] == 0.448


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-b", "cnndm"], "unknown benchmark 'cnndm'"),
        (["-b", "summeval", "--data", "bagel=x.pkl"], "--data 'bagel=x.pkl': give NAME=FILE"),
        (["-b", "summeval", "-d", "faithfulness,nope"], "directions[1] is 'nope'"),
        (["-b", "summeval", "--save-every", "0"], "--save-every must be a positive integer"),
        (["-b", "summeval", "--rescale"], "--rescale baseline: meta-eval does not rescale"),
        (["-b", "summeval", "--rescale", "corpus"], "every correlation, accuracy and significance verdict"),
        (["-b", "summeval", "--metrics-csv", "{nokeys}"], "needs the columns ['doc_id', 'system']"),
        (["-b", "summeval", "--metrics-csv", "{notanumber}"], "line 2, column 'm': 'high' is not a number"),
        (["-b", "summeval", "--data", "summeval={data}", "--metrics-csv", "{unknown}"], "has no record with"),
        (["-b", "summeval", "--data", "summeval={data}", "--metrics-csv", "{partial}"], "has no score for summeval"),
        (["-b", "summeval", "--metrics-csv", "{emptyrow}"], "line 3, column 'm': '' is not a number"),
    ],
)
def test_usage_errors_are_found_before_any_model_loads(tmp_path, capsys, extra, message):
    paths = write_fixture_files(tmp_path)
    tables = {
        "nokeys": "doc,m\nx,1\n",
        "notanumber": "doc_id,system,m\ndm-test-0,M0,high\n",
        "unknown": "doc_id,system,m\ndm-test-9,M0,1\n",
        "partial": "doc_id,system,m\ndm-test-0,M0,1\n",
        "emptyrow": "doc_id,system,m\ndm-test-0,M0,1\n,,\n",  # a row of empty cells is a row, not skipped
    }
    files = {"data": paths["summeval"]}
    for key, text in tables.items():
        (tmp_path / f"{key}.csv").write_text(text, encoding="utf-8")
        files[key] = str(tmp_path / f"{key}.csv")
    argv = [
        "meta-eval",
        *(arg.format(**files) for arg in extra),
        "-m",
        str(tmp_path / "none"),
        "-o",
        str(tmp_path / "t"),
    ]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.xdist_group("evaluate")  # loads the benchmark with datasets
@pytest.mark.parametrize(
    "benchmark, checkout",
    [
        ("wmt19-kk-en", "--release-dir / $BARTSCORE_RELEASE_DIR"),
        ("longeval-pubmed", "--longdoc-release-dir / $LONGDOCFACTSCORE_RELEASE_DIR"),
    ],
)
def test_release_files_that_cannot_be_had_are_said_with_the_flag_of_a_checkout(
    tmp_path, capsys, monkeypatch, benchmark, checkout
):
    """The library names a checkout by its keyword (release_dir); the command line by the flag of that release's."""
    for name in ("BARTSCORE_RELEASE_DIR", "LONGDOCFACTSCORE_RELEASE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "cache"
    argv = ["meta-eval", "-b", benchmark, "--data-cache", str(cache), "-m", str(tmp_path / "none")]
    assert main([*argv, "-o", str(tmp_path / "t")]) == 1
    err = capsys.readouterr().err
    assert f"bartscore meta-eval: {benchmark}: " in err
    assert "and HF_HUB_OFFLINE is set, so they were not downloaded" in err and f"and save it as {cache}{os.sep}" in err
    assert f"or point {checkout} at a checkout of https://github.com/" in err
    assert "release_dir" not in err.replace("--release-dir", "").replace("--longdoc-release-dir", "")


@pytest.mark.parametrize("extra, aggregation", [([], None), (["--aggregation", "mean"], "mean")])
def test_the_options_carry_the_aggregation_and_none_is_the_releases(tmp_path, extra, aggregation):
    """Without --aggregation, the options say None, which score_benchmarks reads as the release's choice per
    benchmark (max for data-to-text); the flag's value otherwise, for every benchmark."""
    from bart_score.cli import build_parser
    from bart_score.cli.meta_eval import check

    argv = ["meta-eval", "-b", "bagel", "--no-detokenize", "-m", str(tmp_path / "none"), "-o", str(tmp_path / "t")]
    request = check(build_parser().parse_args([*argv, *extra]))
    assert request.options.aggregation == aggregation


def test_a_published_row_computed_nowhere_is_said_with_the_flags_that_compute_it():
    from bart_score.cli.meta_eval import how_to_compute
    from bart_score.meta_eval.published import Published

    prompted = Published("summeval/coherence", "BARTScore+CNN+Prompt", 0.5, "Table 4", variant="cnn", prompt="summary")
    assert how_to_compute(prompted, "cnn") == "not run here; run with -m cnn --prompt summary"  # its checkpoint ran
    assert how_to_compute(prompted, "vanilla").startswith("not run here; run with -m cnn --prompt summary (checkpoint ")
    named = Published("realsumm/litepyramid_recall", "ROUGE-1", 0.5, "Table 4", release_key="rouge1_r")
    assert how_to_compute(named, "cnn") == "give its scores as a --metrics-csv column named rouge1_r to compare"


@pytest.mark.slow
def test_matching_a_metrics_csv_takes_time_linear_in_the_records():
    from bart_score.cli.meta_eval import metric_rows

    records = 200_000  # about 0.5 s; when each key rebuilt the set of records, hours
    dataset = {"doc_id": [f"d{i // 4}" for i in range(records)], "system": [f"s{i % 4}" for i in range(records)]}
    values = {key: float(i) for i, key in enumerate(zip(dataset["doc_id"], dataset["system"]))}
    start = time.perf_counter()
    (row,) = metric_rows({"m": {"summeval": values}}, {"summeval": dataset}, "m.csv")
    assert time.perf_counter() - start < 30
    assert row.scores["summeval"] == [float(i) for i in range(records)]


@pytest.mark.slow
def test_under_torchrun_rank_0_writes_the_single_process_table(first_run, tmp_path, tiny_checkpoint):
    folder, _, stdout, _ = first_run
    args = command(tmp_path, tiny_checkpoint, "-o", str(tmp_path / "table"))
    launcher = ("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")
    code, distributed, stderr = run_cli(*args, launcher=launcher)
    assert code == 0, stderr
    assert distributed == stdout
    single = json.loads((folder / "out" / "table.json").read_text(encoding="utf-8"))
    report = json.loads((tmp_path / "table.json").read_text(encoding="utf-8"))
    for got, want in zip(report["rows"], single["rows"]):
        for column, measures in want["values"].items():
            assert abs(got["values"][column]["value"] - measures["value"]) < 1e-6
