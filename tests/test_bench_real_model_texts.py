"""bench/bench_real_model.py's --summeval: the real SummEval's texts as the benchmark scores them (the first documents
in the release's order, each with its first systems and references, Moses-detokenized as the meta-eval does), read by
the library's checked, class-refusing loader; and a one-line usage error, before any model is loaded, where they
cannot be had. The release's own file is read where a checkout is at hand ($BARTSCORE_RELEASE_DIR)."""

from __future__ import annotations

import collections
import importlib
import os
import pickle

import pytest

from bart_score.meta_eval import benchmarks
from bart_score.meta_eval.scoring import moses_detokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE_DIR = os.environ.get(benchmarks.RELEASE_DIR_ENV)
ASPECTS = {"coherence": 3.0, "consistency": 5.0, "fluency": 4.0, "relevance": 2.0}


def judged(text):
    return {"sys_summ": text, "scores": dict(ASPECTS)}


# Three documents in SUM/SummEval/data.pkl's layout, tokenized as the release's texts are; the third has two systems.
SUMMEVAL = {
    "dm-test-b": {
        "src": "It 's the first story , told twice .",
        "ref_summ": "First ref .",
        "ref_summs": ["First ref .", "Second ref ( again ) ."],
        "sys_summs": {"M8": judged("Story one , told ."), "M0": judged('" One " story .'), "M5": judged("A .")},
    },
    "dm-test-a": {
        "src": "The second story : short .",
        "ref_summ": "Short .",
        "ref_summs": ["Short .", "Brief ."],
        "sys_summs": {"M0": judged("Not long !"), "M8": judged("Second ; short ."), "M5": judged("B .")},
    },
    "dm-test-c": {
        "src": "A third .",
        "ref_summ": "Third .",
        "ref_summs": ["Third ."],
        "sys_summs": {"M0": judged("C ."), "M8": judged("D .")},
    },
}


@pytest.fixture(scope="module")
def bench():
    """bench_real_model.py as its command line runs it: bench/ first on sys.path, for its _setup and workload."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(os.path.join(ROOT, "bench"))
        yield importlib.import_module("bench_real_model")


def write_pickle(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        pickle.dump(data, handle)
    return str(path)


def test_the_first_documents_systems_and_references_detokenized(bench, tmp_path):
    path = write_pickle(tmp_path / "data.pkl", SUMMEVAL)
    texts = bench.summeval_workload(path, 2, 2, 1)
    # Written out by hand: the release's order of documents and systems, Moses's English detokenization.
    assert texts.sources == ["It's the first story, told twice.", "The second story: short."]
    assert texts.hypotheses == [["Story one, told.", '"One" story.'], ["Not long!", "Second; short."]]
    assert texts.references == [["First ref."], ["Short."]]
    every = bench.summeval_workload(path, 3, 2, 1)
    assert every.sources[2] == "A third." and every.hypotheses[2] == ["C.", "D."]


@pytest.mark.parametrize(
    "sizes, message",
    [
        ((4, 2, 1), "--sources 4: {path} has 3 SummEval documents"),
        ((3, 3, 1), "--hypotheses 3: {path} has 2 systems in one of them"),
        ((2, 3, 1), None),  # the third document, with two systems, is not taken
        ((2, 1, 3), "--references 3: {path} has 2 references in one of them"),
    ],
)
def test_too_few_documents_systems_or_references_are_named(bench, tmp_path, sizes, message):
    path = write_pickle(tmp_path / "data.pkl", SUMMEVAL)
    if message is None:
        assert len(bench.summeval_workload(path, *sizes).hypotheses[1]) == 3
        return
    with pytest.raises(ValueError) as raised:
        bench.summeval_workload(path, *sizes)
    assert str(raised.value) == message.format(path=path)


def usage_error(bench, capsys, *argv):
    """main's exit status and the error line argparse prints under its usage."""
    with pytest.raises(SystemExit) as raised:
        bench.main(["--checkpoint", "/nonexistent-model", *argv])  # never loaded: the texts are read first
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return raised.value.code, err.strip().splitlines()[-1]


def test_texts_that_cannot_be_had_are_a_one_line_usage_error(bench, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, line = usage_error(bench, capsys, "--summeval", str(empty))
    assert code == 2
    assert f"error: --summeval {empty}: " in line
    assert "lacks SUM/SummEval/data.pkl" in line
    assert line.endswith("Give a checkout of https://github.com/neulab/BARTScore (commit 248f511).")

    # a checkout whose file is not the release's: refused by its checksums before it is unpickled
    write_pickle(tmp_path / "copy" / "SUM" / "SummEval" / "data.pkl", SUMMEVAL)
    code, line = usage_error(bench, capsys, "--summeval", str(tmp_path / "copy"))
    assert code == 2 and "is not SUM/SummEval/data.pkl of the BARTScore release at commit 248f511" in line

    # a file that names a class is refused by the loader, not unpickled
    hostile = write_pickle(tmp_path / "hostile.pkl", collections.OrderedDict(SUMMEVAL))
    code, line = usage_error(bench, capsys, "--summeval", hostile)
    assert code == 2 and hostile in line

    code, line = usage_error(
        bench, capsys, "--summeval", write_pickle(tmp_path / "data.pkl", SUMMEVAL), "--sources", "9"
    )
    assert code == 2 and line.endswith(
        "error: --sources 9: " + str(tmp_path / "data.pkl") + " has 3 SummEval documents"
    )


def test_the_releases_own_file(bench):
    if not RELEASE_DIR:
        pytest.skip(reason=f"set {benchmarks.RELEASE_DIR_ENV} to a checkout of neulab/BARTScore to read its SummEval")
    texts = bench.summeval_workload(RELEASE_DIR, 2, 16, 11)
    with open(os.path.join(RELEASE_DIR, "SUM", "SummEval", "data.pkl"), "rb") as handle:
        release = pickle.load(handle)  # the release's own file, checked by the loader just above
    detokenize = moses_detokenizer()
    first = list(release.values())[:2]
    assert texts.sources == [detokenize(record["src"]) for record in first]
    assert texts.hypotheses == [[detokenize(o["sys_summ"]) for o in r["sys_summs"].values()] for r in first]
    assert texts.references == [[detokenize(text) for text in record["ref_summs"]] for record in first]
    assert [len(hypotheses) for hypotheses in texts.hypotheses] == [16, 16]
