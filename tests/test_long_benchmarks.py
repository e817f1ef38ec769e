"""LongDocFACTScore's benchmarks in meta-eval, on fixture files in their release's formats: the loaders against a
plain reading of the files as the release's evaluation script reads them, the checks on where the files come from,
the Kendall protocol against a loop over their pooled columns, and `bartscore meta-eval` end to end with its three
rows (truncated, windows, and for a causal LM the whole source)."""

import csv
import dataclasses
import json
import os
import random
import re

import numpy as np
import pytest
from scipy import stats
from support.text import english_like

from bart_score import BenchmarkDataError
from bart_score.cli import main
from bart_score.meta_eval import benchmarks
from bart_score.meta_eval._layouts import LONGEVAL_SYSTEMS, LONGSCIVERIFY_SYSTEMS
from bart_score.meta_eval.benchmarks import load_benchmark
from bart_score.meta_eval.protocol import bootstrap_subsets, correlate, significance

IDS = ["PMC100", "0806.4325", "physics01 ", "PMC300\xa0"]
ARTICLE_IDS = ["PMC100", "0806.43250", "physics01", "PMC300"]  # the second is found by containment, as theirs
EMPTY = (2, 3, 3)  # (row index, model, sentence) left unrated by every annotator, as two arXiv summaries are


def sentences(rng, count):
    return [english_like(rng, rng.randint(6, 12))[:-1] + "." for _ in range(count)]


def write_longsciverify(folder, corpus="pubmed", seed=0):
    """Three annotators' CSVs (with a byte-order mark, as the release's) and the raw articles JSON."""
    rng = random.Random(seed)
    articles = [
        {
            "article_id": article_id,
            "article_text": sentences(rng, 12),
            "abstract_text": [f"<S> {s} </S>" for s in sentences(rng, 2)],
            "labels": None,
            "section_names": [],
            "sections": [],
        }
        for article_id in ARTICLE_IDS
    ]
    raw = os.path.join(folder, "data", "raw_data", "LongSciVerify")
    os.makedirs(raw, exist_ok=True)
    with open(os.path.join(raw, f"{corpus}_test.json"), "w", encoding="utf-8") as handle:
        json.dump(articles, handle)
    summaries = [[" ".join(sentences(rng, 3)) for _ in LONGSCIVERIFY_SYSTEMS] for _ in IDS]
    human = os.path.join(folder, "data", "human_eval_results", "LongSciVerify")
    os.makedirs(human, exist_ok=True)
    columns = ["id", *LONGSCIVERIFY_SYSTEMS]
    columns += [f"model_{m}_{aspect}" for aspect in ("coherence", "fluency") for m in (1, 2, 3)]
    columns += [f"model_{m}_sent_{s}_factuality" for m in (1, 2, 3) for s in (1, 2, 3)]
    for reviewer in (1, 2, 3):
        with open(os.path.join(human, f"{corpus}_reviewer_{reviewer}.csv"), "w", encoding="utf-8-sig", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for row, doc_id in enumerate(IDS):
                cells = [doc_id, *summaries[row]] + [str(rng.randint(1, 3)) for _ in range(6)]
                for model in (1, 2, 3):
                    for sentence in (1, 2, 3):
                        cells.append("" if (row, model, sentence) == EMPTY else str(rng.randint(0, 1)))
                writer.writerow(cells)
    return folder


def write_longeval(folder, seed=1):
    rng = random.Random(seed)
    texts, judgments = {}, []
    for article in range(3):
        source = " ".join(sentences(rng, 10))
        for method in (*LONGEVAL_SYSTEMS, "human"):
            texts[f"article_{article}_{method}"] = {"source_doc": source, "summary": " ".join(sentences(rng, 3))}
        for method in LONGEVAL_SYSTEMS:
            judgments.append({"story": f"article_{article}_{method}", "score": [rng.uniform(0, 100) for _ in range(3)]})
    judgments.append(
        {"story": "article_0_longt5", "score": [0.0, 0.0, 0.0]}
    )  # a later judgment: theirs reads the first
    for path, content in (
        ("data/raw_data/LongEval/pubmed_summary_src_doc_data.json", texts),
        ("data/human_eval_results/LongEval/pubmed_fine_scores.json", judgments),
    ):
        os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
        with open(os.path.join(folder, path), "w", encoding="utf-8") as handle:
            json.dump(content, handle)
    return folder


# -- the reference: the files read as run_evaluation.py reads them ----------------------------------------------------


def clean(text):
    for tag in ("<S>", "</S>", "<pad>", "<br />"):
        text = text.replace(tag, "")
    return text


def expected_longsciverify(folder, corpus="pubmed"):
    import pandas as pd

    human = os.path.join(folder, "data", "human_eval_results", "LongSciVerify")
    frames = [pd.read_csv(os.path.join(human, f"{corpus}_reviewer_{n}.csv")) for n in (1, 2, 3)]
    with open(os.path.join(folder, "data", "raw_data", "LongSciVerify", f"{corpus}_test.json"), encoding="utf-8") as f:
        articles = json.load(f)
    rows = []
    for index in range(len(frames[0])):
        doc_id = frames[0].loc[index, "id"]
        article = next(a for a in articles if a["article_id"] == doc_id.strip() or doc_id in a["article_id"])
        for model, system in enumerate(LONGSCIVERIFY_SYSTEMS, start=1):
            means = []
            for frame in frames:
                ratings = [frame.loc[index, f"model_{model}_sent_{s}_factuality"] for s in (1, 2, 3)]
                means.append(np.nanmean(ratings))  # theirs sums the three: NaN where one is missing
            rows.append(
                {
                    "doc_id": doc_id.strip(),
                    "system": system,
                    "source": "".join(f" {clean(s)} " for s in article["article_text"]),
                    "references": ["".join(f" {clean(s)} " for s in article["abstract_text"])],
                    "hypothesis": frames[0].loc[index, system],
                    "human_factuality": sum(means) / 3,
                }
            )
    return rows


def assert_same_rows(rows, expected):
    """Rows equal, floats to rounding: pytest.approx compares flat values only (pytest 9 refuses the list of
    references nested in a row)."""
    assert len(rows) == len(expected)
    for index, (row, wanted) in enumerate(zip(rows, expected)):
        assert row.keys() == wanted.keys(), index
        for key, value in wanted.items():
            if isinstance(value, float):
                assert row[key] == pytest.approx(value), (index, key)
            else:
                assert row[key] == value, (index, key)


def test_longsciverify_is_read_as_their_script_reads_it(tmp_path):
    folder = write_longsciverify(tmp_path)
    dataset = load_benchmark("longsciverify-pubmed", data_file=str(folder))
    expected = expected_longsciverify(folder)
    assert dataset.num_rows == 12
    assert_same_rows(dataset.to_list(), expected)
    assert [row["doc_id"] for row in dataset][::3] == ["PMC100", "0806.4325", "physics01", "PMC300"]
    assert "a folder given for it, not checked" in dataset.info.description


def test_longeval_is_read_as_their_script_reads_it(tmp_path):
    folder = write_longeval(tmp_path)
    dataset = load_benchmark("longeval-pubmed", data_file=str(folder))
    with open(os.path.join(folder, "data/raw_data/LongEval/pubmed_summary_src_doc_data.json"), encoding="utf-8") as f:
        texts = json.load(f)
    with open(os.path.join(folder, "data/human_eval_results/LongEval/pubmed_fine_scores.json"), encoding="utf-8") as f:
        judgments = json.load(f)
    expected = []
    for article in range(3):
        for method in LONGEVAL_SYSTEMS:
            key = f"article_{article}_{method}"
            expected.append(
                {
                    "doc_id": str(article),
                    "system": method,
                    "source": texts[key]["source_doc"],
                    "references": [texts[f"article_{article}_human"]["summary"]],
                    "hypothesis": texts[key]["summary"],
                    "human_factuality": float(np.mean(next(j["score"] for j in judgments if j["story"] == key))),
                }
            )
    assert_same_rows(dataset.to_list(), expected)


def test_a_folder_that_lacks_a_file_is_named(tmp_path):
    folder = write_longsciverify(tmp_path)
    os.remove(os.path.join(folder, "data", "raw_data", "LongSciVerify", "pubmed_test.json"))
    with pytest.raises(BenchmarkDataError, match=r"needs data/raw_data/LongSciVerify/pubmed_test.json"):
        load_benchmark("longsciverify-pubmed", data_file=str(folder))


def test_release_files_are_checked_and_named(tmp_path, monkeypatch):
    monkeypatch.delenv(benchmarks.LONGDOC_DIR_ENV, raising=False)
    folder = write_longsciverify(tmp_path)
    with pytest.raises(BenchmarkDataError) as error:
        load_benchmark("longsciverify-pubmed", release_dir=str(folder))
    message = str(error.value)
    assert (
        "is not data/human_eval_results/LongSciVerify/pubmed_reviewer_1.csv of the LongDocFACTScore release" in message
    )
    assert "ffcb1b7fe46eb4e1a8a5c97efa32bded95e755ea" in message
    with pytest.raises(BenchmarkDataError, match=r"lacks data/human_eval_results/LongEval") as error:
        load_benchmark("longeval-pubmed", release_dir=str(folder))
    assert "or point release_dir / $LONGDOCFACTSCORE_RELEASE_DIR at a checkout" in str(error.value)
    assert (error.value.release, error.value.cache_path) == ("longdocfactscore", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BenchmarkDataError, match=r"of the LongDocFACTScore release\) are not at .*HF_HUB_OFFLINE"):
        load_benchmark("longeval-pubmed", cache_dir=str(tmp_path / "cache"))


def test_a_release_checkout_with_genuine_files_is_read(tmp_path, monkeypatch):
    """The checksums are the files' own: a checkout whose files match them is read (here the fixture's files, with
    checksums recomputed for them)."""
    folder = write_longeval(tmp_path)
    benchmark = benchmarks.BENCHMARKS["longeval-pubmed"]

    def genuine(file):
        with open(os.path.join(folder, file.path), "rb") as handle:
            content = handle.read()
        return dataclasses.replace(file, git_blob_sha1=benchmarks.git_blob_sha1(content), sha256=None)

    replaced = dataclasses.replace(
        benchmark, files={role: tuple(map(genuine, files)) for role, files in benchmark.files.items()}
    )
    monkeypatch.setitem(benchmarks.BENCHMARKS, "longeval-pubmed", replaced)
    monkeypatch.setenv(benchmarks.LONGDOC_DIR_ENV, str(folder))
    dataset = load_benchmark("longeval-pubmed")
    assert dataset.to_list() == load_benchmark("longeval-pubmed", data_file=str(folder)).to_list()
    assert "of jbshp/LongDocFACTScore@62e441d, checked" in dataset.info.description


# -- the protocol ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_kendall_protocol_is_their_pooled_kendall_tau(tmp_path):
    """Their kendal_tau_matrix pools each metric's per-system columns into one list (model_1's records, then
    model_2's, ...) and takes scipy's Kendall's tau between the pooled human and metric lists."""
    rng = np.random.default_rng(0)
    doc_ids = [d for d in range(6) for _ in range(3)]
    human = rng.integers(0, 4, size=18) / 3
    scores = rng.normal(size=18) + human
    pooled_human = [human[d * 3 + s] for s in range(3) for d in range(6)]
    pooled_scores = [scores[d * 3 + s] for s in range(3) for d in range(6)]
    result = correlate("kendall", doc_ids, human, scores)
    assert result["kendall"] == pytest.approx(stats.kendalltau(pooled_human, pooled_scores)[0], abs=1e-12)
    assert result["documents"] == 6
    other = rng.normal(size=18)
    tests, _ = significance("kendall", doc_ids, human, {"a": scores, "b": other}, rounds=50)
    wins = 0
    for subset in bootstrap_subsets(doc_ids, rounds=50):
        kept = [i for i, d in enumerate(doc_ids) if d in set(subset.tolist())]
        wins += stats.kendalltau(human[kept], scores[kept])[0] > stats.kendalltau(human[kept], other[kept])[0]
    assert tests[0]["wins"] == wins


# -- the command line ------------------------------------------------------------------------------------------------


def run_meta_eval(tmp_path, model, *extra):
    folder = write_longsciverify(tmp_path / "release")
    prefix = tmp_path / "out" / "table"
    status = main(
        [
            "meta-eval",
            "-b",
            "longsciverify-pubmed",
            "-m",
            model,
            "--device",
            "cpu",
            "--data",
            f"longsciverify-pubmed={folder}",
            "--retriever",
            "bm25",
            "-o",
            str(prefix),
            "-q",
            "--no-significance",
            *extra,
        ]
    )
    assert status == 0
    with open(f"{prefix}.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.slow
def test_meta_eval_reports_truncated_and_window_rows(tmp_path, tiny_checkpoint, capsys):
    report = run_meta_eval(tmp_path, tiny_checkpoint, "--windows-k", "2")
    names = [row["name"] for row in report["rows"]]
    model = os.path.basename(tiny_checkpoint)
    assert names == [f"BARTScore {model}", f"BARTScore {model} windows (k=2, longdocfactscore, bm25)"]
    for row in report["rows"]:
        assert row["values"]["longsciverify-pubmed/factuality"]["documents"] == 4
    signature = report["rows"][1]["signatures"]["longsciverify-pubmed"]
    assert "long:windows(k=2,window=ldfs,retriever=bm25" in signature
    assert report["longdoc_release"]["commit"] == benchmarks.LONGDOC_COMMIT
    assert "Long documents (LongDocFACTScore's benchmarks)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_causal_lm_with_long_positions_also_gets_the_whole_source(tmp_path):
    from support.models import build_tiny

    directory = build_tiny("gpt2", tmp_path / "gpt2", max_positions=2048)
    report = run_meta_eval(tmp_path, directory, "--max-length", "64")
    names = [row["name"] for row in report["rows"]]
    assert names[2] == "BARTScore gpt2 whole source (max_length 2048)"
    assert "maxlen:2048" in report["rows"][2]["signatures"]["longsciverify-pubmed"]
    assert "maxlen:64" in report["rows"][0]["signatures"]["longsciverify-pubmed"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-b", "summeval", "--windows-k", "2"], "--windows-k is for --long-source windows"),
        (["-b", "longeval-pubmed", "--windows-k", "0"], r"--windows-k\b.* must be a positive integer"),
        (["-b", "longeval-pubmed", "--window", "wide"], "--window must be 'longdocfactscore' or a whole number"),
        (["-b", "longeval-pubmed", "--data", "longeval-pubmed=/nonexistent"], "is not a folder"),
    ],
)
def test_meta_eval_long_source_flags_are_checked(flags, message, capsys):
    assert main(["meta-eval", *flags, "-m", "cnn"]) == 2
    assert re.search(message, capsys.readouterr().err)


# -- the release's own files, where a checkout is at hand --------------------------------------------------------------

RELEASE_DIR = os.environ.get(benchmarks.LONGDOC_DIR_ENV)


@pytest.mark.parametrize("name", ["longsciverify-pubmed", "longsciverify-arxiv"])
def test_release_files(name):
    if not RELEASE_DIR:
        pytest.skip(reason=f"set {benchmarks.LONGDOC_DIR_ENV} to a checkout of jbshp/LongDocFACTScore to check it")
    dataset = load_benchmark(name, release_dir=RELEASE_DIR)
    expected = expected_longsciverify(RELEASE_DIR, name.split("-")[1])
    assert dataset.num_rows == 45
    assert_same_rows(dataset.to_list(), expected)
