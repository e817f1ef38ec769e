"""Benchmark loaders on fixture files in the release's pickled layouts; where the files come from and how they are
checked; and the release's real files where a checkout is at hand."""

import collections
import contextlib
import dataclasses
import functools
import hashlib
import http.server
import os
import pickle
import threading

import pytest

from bart_score.errors import BenchmarkDataError
from bart_score.messages import Mention
from bart_score.meta_eval import benchmarks
from bart_score.meta_eval.benchmarks import load_benchmark, resolve_benchmarks

SUMMARIES = {
    7: {
        "src": "The cat sat on the mat .",
        "ref_summ": "A cat sat .",
        "sys_summs": {
            "sysA": {"sys_summ": "The cat sat .", "scores": {"litepyramid_recall": 0.5}},
            "sysB": {"sys_summ": "A dog .", "scores": {"litepyramid_recall": 0.0}},
        },
    },
    "12": {
        "src": "It rained all day in the city .",
        "ref_summ": "Rain .",
        "sys_summs": {
            "sysA": {"sys_summ": "It rained .", "scores": {"litepyramid_recall": 1.0}},
            "sysB": {"sys_summ": "The city .", "scores": {"litepyramid_recall": 0.25}},
        },
    },
}
SUMMEVAL = {
    "dm-test-1": {
        "src": "Source one .",
        "ref_summ": "Ref one .",
        "ref_summs": ["Ref one .", "Another ref ."],
        "sys_summs": {
            "M0": {
                "sys_summ": "Hyp zero .",
                "scores": {"coherence": 2.0, "consistency": 5.0, "fluency": 4.0, "relevance": 3.0},
            },
            "M1": {
                "sys_summ": "Hyp one .",
                "scores": {"coherence": 1.0, "consistency": 4.0, "fluency": 5.0, "relevance": 2.0},
            },
        },
    }
}
RANK19 = {
    0: {
        "src": "Article .",
        "ref_summ": "Article .",
        "sys_summs": {
            "correct": {"sys_summ": "Right .", "scores": {"fact": 1}},
            "incorrect": {"sys_summ": "Wrong .", "scores": {"fact": 0}},
        },
    }
}
DATA_TO_TEXT = {
    0: {
        "src": "inform(name=X)",
        "sys_summ": "X is a place .",
        "ref_summs": ["X is here .", "X is here .", "There is X ."],
        "scores": {"informativeness": 6.0, "naturalness": 4.0, "quality": 5.0},
    },
    1: {
        "src": "inform(name=Y)",
        "sys_summ": "Y .",
        "ref_summs": ["Y is here ."],
        "scores": {"informativeness": 2.0, "naturalness": 3.5, "quality": 2.5},
    },
}
DARR = {
    0: {
        "src": "Das ist gut.",
        "ref": "That is good.",
        "better": {"sys_name": "online-B.0", "sys": "This is good.", "scores": {}},
        "worse": {"sys_name": "NEU.6753", "sys": "That good is.", "scores": {}},
    }
}


def write_pickle(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        pickle.dump(data, handle)
    return str(path)


def loop_rows(data, layout, aspects):
    """The rows a loader should give, walked in plain loops over the release's dict."""
    rows = []
    for doc_id, record in data.items():
        if layout == "summaries":
            references = record.get("ref_summs", [record["ref_summ"]])
            for system, output in record["sys_summs"].items():
                human = {f"human_{a}": float(output["scores"][a]) for a in aspects}
                rows.append((str(doc_id), str(system), record["src"], references, output["sys_summ"], human))
        elif layout == "data-to-text":
            human = {f"human_{a}": float(record["scores"][a]) for a in aspects}
            rows.append((str(doc_id), "", record["src"], record["ref_summs"], record["sys_summ"], human))
        else:
            for side, judged in (("better", 1.0), ("worse", 0.0)):
                translation = record[side]
                rows.append(
                    (
                        str(doc_id),
                        translation["sys_name"],
                        record["src"],
                        [record["ref"]],
                        translation["sys"],
                        {"human_darr": judged},
                    )
                )
    return rows


def dataset_rows(dataset, aspects):
    columns = ["doc_id", "system", "source", "references", "hypothesis"]
    return [
        (*(row[c] for c in columns), {f"human_{a}": row[f"human_{a}"] for a in aspects}) for row in dataset.to_list()
    ]


@pytest.mark.parametrize(
    "name, data",
    [
        ("realsumm", SUMMARIES),
        ("summeval", SUMMEVAL),
        ("rank19", RANK19),
        ("bagel", DATA_TO_TEXT),
        ("wmt19-kk-en", DARR),
    ],
)
def test_loaders_read_the_release_layouts(tmp_path, name, data):
    benchmark = benchmarks.BENCHMARKS[name]
    path = write_pickle(tmp_path / "data.pkl", data)
    dataset = load_benchmark(name, data_file=path)
    assert dataset.column_names == [
        "doc_id",
        "system",
        "source",
        "references",
        "hypothesis",
        *(f"human_{a}" for a in benchmark.aspects),
    ]
    assert dataset_rows(dataset, benchmark.aspects) == loop_rows(data, benchmark.layout, benchmark.aspects)
    assert dataset.info.description.endswith(f"{path} (a file given for it, not checked against the release)")


def test_layout_mistakes_are_named(tmp_path):
    broken = {7: {"src": "x", "ref_summ": "y"}}
    with pytest.raises(BenchmarkDataError, match=r"document 7 has no 'sys_summs'"):
        load_benchmark("realsumm", data_file=write_pickle(tmp_path / "a.pkl", broken))
    wrong_score = {7: {**SUMMARIES[7], "sys_summs": {"s": {"sys_summ": "h", "scores": {"litepyramid_recall": "x"}}}}}
    with pytest.raises(BenchmarkDataError, match=r"document 7 has a non-numeric 'litepyramid_recall'"):
        load_benchmark("realsumm", data_file=write_pickle(tmp_path / "b.pkl", wrong_score))
    with pytest.raises(BenchmarkDataError, match=r"expected a non-empty dict"):
        load_benchmark("realsumm", data_file=write_pickle(tmp_path / "c.pkl", []))


def test_pickles_that_name_classes_are_refused(tmp_path):
    path = write_pickle(tmp_path / "data.pkl", collections.OrderedDict(SUMMARIES))
    with pytest.raises(BenchmarkDataError, match=r"refusing to unpickle collections.OrderedDict"):
        load_benchmark("realsumm", data_file=path)


def test_names_and_groups():
    assert resolve_benchmarks(["SummEval", "wmt19", "wmt19-de-en"]) == [
        "summeval",
        *(f"wmt19-{p}" for p in ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")),
    ]
    with pytest.raises(ValueError, match=r"unknown benchmark 'cnndm'; choose from realsumm, summeval") as raised:
        resolve_benchmarks(["cnndm"])
    assert raised.value.remedy[0].startswith("choose from realsumm, summeval")


def test_a_release_file_that_is_not_the_releases_is_refused(tmp_path):
    write_pickle(tmp_path / "SUM" / "REALSumm" / "data.pkl", SUMMARIES)
    with pytest.raises(BenchmarkDataError) as error:
        load_benchmark("realsumm", release_dir=str(tmp_path))
    message = str(error.value)
    assert "is not SUM/REALSumm/data.pkl of the BARTScore release at commit 248f511" in message
    assert "0e476e1afb671fbe00b639b19cf42dab70e28f94" in message  # the release's git blob id
    with pytest.raises(BenchmarkDataError, match=r"lacks SUM/SummEval/data.pkl.*Download https://raw"):
        load_benchmark("summeval", release_dir=str(tmp_path))


def test_offline_without_a_copy_names_the_file_and_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BenchmarkDataError) as error:
        load_benchmark("summeval", cache_dir=str(tmp_path))
    message = str(error.value)
    assert "SUM/SummEval/data.pkl of the BARTScore release" in message
    assert str(tmp_path / "SUM" / "SummEval" / "data.pkl") in message
    assert f"{benchmarks.RELEASE_URL}SUM/SummEval/data.pkl" in message
    assert "or point release_dir / $BARTSCORE_RELEASE_DIR at a checkout" in message
    assert "HF_HUB_OFFLINE is set" in message
    # What a front end says it from in its own words: the reason, and which file of which release is missing where.
    assert message.startswith(error.value.reason + " Download ")
    assert (error.value.option, error.value.release) == ("release_dir", "bartscore")
    assert Mention("release_dir") in error.value.parts  # which a front end says in its own words
    assert error.value.release_file == "SUM/SummEval/data.pkl"
    assert error.value.cache_path == str(tmp_path / "SUM" / "SummEval" / "data.pkl")


@contextlib.contextmanager
def serving(folder):
    """A loopback HTTP server for `folder`."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_download_is_checked_then_cached(tmp_path, monkeypatch):
    served = tmp_path / "served"
    path = write_pickle(served / "SUM" / "REALSumm" / "data.pkl", SUMMARIES)
    with open(path, "rb") as handle:
        content = handle.read()
    genuine = dataclasses.replace(
        benchmarks.BENCHMARKS["realsumm"],
        files={
            "judgments": (
                benchmarks.ReleaseFile(
                    path="SUM/REALSumm/data.pkl",
                    git_blob_sha1=benchmarks.git_blob_sha1(content),
                    sha256=hashlib.sha256(content).hexdigest(),
                ),
            )
        },
    )
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    cache = tmp_path / "cache"
    with serving(served) as url:
        monkeypatch.setitem(
            benchmarks.RELEASES, "bartscore", dataclasses.replace(benchmarks.RELEASES["bartscore"], url=url)
        )
        # The real checksums do not match this content: the download is refused and nothing is kept.
        with pytest.raises(BenchmarkDataError, match=r"is not SUM/REALSumm/data.pkl of the BARTScore release"):
            load_benchmark("realsumm", cache_dir=str(cache))
        assert not (cache / "SUM" / "REALSumm" / "data.pkl").exists()
        monkeypatch.setitem(benchmarks.BENCHMARKS, "realsumm", genuine)
        dataset = load_benchmark("realsumm", cache_dir=str(cache))
        with pytest.raises(BenchmarkDataError, match=r"lacks|could not be downloaded"):
            load_benchmark("summeval", cache_dir=str(cache))  # the server has no such file
    assert (cache / "SUM" / "REALSumm" / "data.pkl").read_bytes() == content
    assert [f for f in os.listdir(cache / "SUM" / "REALSumm") if f.startswith(".")] == []
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the cached copy is used from now on, offline
    assert load_benchmark("realsumm", cache_dir=str(cache)).to_list() == dataset.to_list()


# ---------------------------------------------------------------------------------------------------------------------
# the release's real files, where a checkout is at hand

RELEASE_DIR = os.environ.get(benchmarks.RELEASE_DIR_ENV)


@pytest.mark.parametrize("name", sorted(benchmarks.BENCHMARKS))
def test_release_files(name):
    if not RELEASE_DIR:
        pytest.skip(reason=f"set {benchmarks.RELEASE_DIR_ENV} to a checkout of neulab/BARTScore to check its files")
    benchmark = benchmarks.BENCHMARKS[name]
    path = os.path.join(RELEASE_DIR, benchmark.file.path)
    if not os.path.isfile(path):
        pytest.skip(reason=f"{path} is not in this checkout")
    dataset = load_benchmark(name, release_dir=RELEASE_DIR)
    with open(path, "rb") as handle:
        data = pickle.load(handle)  # the release's own file, checked by the loader just above
    expected = loop_rows(data, benchmark.layout, benchmark.aspects)
    assert dataset.num_rows == len(expected)
    assert dataset_rows(dataset.select(range(0, dataset.num_rows, 97)), benchmark.aspects) == expected[::97]
