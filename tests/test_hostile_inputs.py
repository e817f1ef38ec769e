"""Hostile file inputs, as classes: endless files (devices, pipes) and files over the size limit given to every flag
and library reader; JSON nested too deeply wherever JSON is read; a score cache that is not ours, or holds scores
that are not numbers; a data.pkl that unfolds into far more data than its size; a state dict file that is none. Each
is refused with a clear error naming the file (and the flag, on the command line) before any model loads."""

import contextlib
import json
import os
import pickle
import threading
import time

import pytest
import torch
from support.meta_eval_fixtures import write_fixture_files
from support.metric import MODULE

from bart_score.baselines.files import load_baseline
from bart_score.cli import main
from bart_score.corpus import read_plain_corpus, read_texts
from bart_score.errors import (
    BaselineError,
    BenchmarkDataError,
    CacheFileError,
    CheckpointLoadError,
    InputError,
)
from bart_score.meta_eval.benchmarks import load_benchmark
from bart_score.meta_eval.layouts import read_release_pickle
from bart_score.reading import MAX_JSON_DEPTH, parse_json, read_bounded
from bart_score.score_cache import ResumableScorer, read_cache_file
from bart_score.tables import read_table

ENDLESS = ["/dev/zero", "/dev/urandom"]
NO_MODEL = "/nonexistent/model"  # never loaded: every refusal below comes first


@pytest.fixture
def files(tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("The cat sat on the mat .\nA dog ran in the park .\n", encoding="utf-8")
    oversized = tmp_path / "oversized.txt"
    with open(oversized, "wb") as handle:  # sparse: 1 GiB + 1 byte on no disk
        handle.truncate((1 << 30) + 1)
    data = write_fixture_files(tmp_path)["summeval"]
    return {"texts": str(texts), "oversized": str(oversized), "data": data, "folder": tmp_path}


def command_lines(files, hostile):
    """(flag, command line) for every file-taking flag of every subcommand, that flag given `hostile`."""
    texts, data = files["texts"], files["data"]
    scoring = [
        ("--sources", ["-s", hostile, "-t", texts]),
        ("--references", ["-r", hostile, "-t", texts]),
        ("--hypotheses", ["-s", texts, "-t", hostile]),
        ("--input", ["-i", hostile]),
        ("--baseline", ["-s", texts, "-t", texts, "--baseline", hostile]),
    ]
    lines = [(flag, [command, "-m", NO_MODEL, *rest]) for command in ("score", "compare") for flag, rest in scoring]
    lines.append(("--corpus", ["baseline", "-m", NO_MODEL, "--corpus", hostile]))
    meta = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--no-detokenize", "-o", str(files["folder"] / "out")]
    lines.append(("--metrics-csv", [*meta, "--data", f"summeval={data}", "--metrics-csv", hostile]))
    lines.append(("--data", [*meta, "--data", f"summeval={hostile}"]))
    lines.append(("--cache", [*meta, "--data", f"summeval={data}", "--cache", hostile]))
    return lines


@pytest.mark.parametrize("hostile", [*ENDLESS, "oversized"])
def test_every_file_flag_refuses_endless_and_oversized_files_at_once(files, hostile, capsys, no_model_load):
    hostile = files.get(hostile, hostile)
    for flag, argv in command_lines(files, hostile):
        started = time.perf_counter()
        assert main(argv) == 2, (flag, argv)
        error = capsys.readouterr().err
        assert time.perf_counter() - started < 10, flag
        assert flag in error and hostile in error, (flag, error)
        assert "Traceback" not in error
        if hostile in ENDLESS and flag != "--data":  # --data names a file the pickle reader never opens
            assert "character device" in error or "not a regular file" in error, (flag, error)


@pytest.mark.parametrize("hostile", ENDLESS)
def test_every_library_reader_refuses_endless_files(files, hostile, scorer):
    readers = [
        (InputError, lambda: read_texts(hostile)),
        (InputError, lambda: read_plain_corpus(sources=hostile, hypotheses=[files["texts"]])),
        (InputError, lambda: read_table(hostile, kind="csv")),
        (InputError, lambda: read_table(hostile, kind="jsonl")),
        (BaselineError, lambda: load_baseline(hostile)),
        (BenchmarkDataError, lambda: read_release_pickle(hostile)),
        (BenchmarkDataError, lambda: load_benchmark("summeval", data_file=hostile)),
        (CacheFileError, lambda: read_cache_file(hostile)),
        (CacheFileError, lambda: ResumableScorer(scorer, hostile).score(["a ."], ["b ."])),
    ]
    for kind, read in readers:
        with pytest.raises(kind, match=rf"{hostile} is a character device, not a file"):
            read()


def test_a_pipe_is_read_up_to_the_limit_and_refused_past_it(tmp_path):
    pipe = str(tmp_path / "pipe")
    os.mkfifo(pipe)

    def write(size):
        with open(pipe, "wb") as handle, contextlib.suppress(BrokenPipeError):  # the reader stopped at its limit
            handle.write(b"x" * size)

    for size, refused in ((1000, False), (5000, True)):
        writer = threading.Thread(target=write, args=(size,))
        writer.start()
        if refused:
            with pytest.raises(InputError, match=r"goes on past the 1000 bytes limit"):
                read_bounded(pipe, limit=1000)
        else:
            assert read_bounded(pipe, limit=1000) == b"x" * 1000
        writer.join(timeout=10)


def nested(depth):
    """JSON of `depth` nested arrays around a number, built by a plain loop."""
    return "[" * depth + "1" + "]" * depth


def test_json_nested_deeper_than_the_bound_is_refused_and_up_to_it_read():
    assert parse_json(nested(MAX_JSON_DEPTH), "x") is not None
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        with pytest.raises(InputError, match=r"^x nests JSON too deeply"):
            parse_json(nested(depth), "x")


def test_deep_json_is_refused_in_every_file_the_project_reads(files, tmp_path, scorer, capsys, no_model_load):
    deep = nested(100_000)
    baseline = tmp_path / "deep-baseline.json"
    baseline.write_text(deep, encoding="utf-8")
    with pytest.raises(BaselineError, match=r"deep-baseline.json nests JSON too deeply"):
        load_baseline(str(baseline))
    table = tmp_path / "deep.jsonl"
    table.write_text('{"source": "a", "s": ' + deep + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"deep.jsonl line 1 nests JSON too deeply"):
        read_table(str(table))
    cache = tmp_path / "deep-cache.jsonl"
    cache.write_text(header_line() + "\n" + deep + "\n", encoding="utf-8")
    with pytest.raises(CacheFileError, match=r"deep-cache.jsonl line 2 nests JSON too deeply"):
        ResumableScorer(scorer, str(cache)).score(["a ."], ["b ."])

    texts = files["texts"]
    assert main(["score", "-m", NO_MODEL, "-s", texts, "-t", texts, "--baseline", str(baseline)]) == 2
    assert "deep-baseline.json nests JSON too deeply" in capsys.readouterr().err
    meta = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--no-detokenize", "--data", f"summeval={files['data']}"]
    assert main([*meta, "-o", str(tmp_path / "out"), "--cache", str(cache)]) == 2  # before scoring, and the model
    assert "deep-cache.jsonl line 2 nests JSON too deeply" in capsys.readouterr().err


SCORER_ID = "0123456789abcdef"
PAIR = "0123456789abcdef0123456789abcdef"


def header_line():
    return json.dumps({"scorer": SCORER_ID, "signature": ["ckpt:x"]})


def score_line(score):
    return f'{{"scorer": "{SCORER_ID}", "pair": "{PAIR}", "score": {score}}}'


@pytest.mark.parametrize(
    "content",
    [
        "a note of one line, without a newline",
        '{"name":"x","values":[1,2,3]}',  # a minified JSON
        "a note\nof two lines\n",
        '{"name": "x"}\n' + score_line(1.0) + "\n",  # JSON lines, but not a cache's
        "",
    ],
)
def test_a_file_that_is_not_a_cache_is_refused_and_left_as_it_is(tmp_path, scorer, content, capsys, no_model_load):
    path = tmp_path / "notes.txt"
    path.write_bytes(content.encode("utf-8"))
    if content == "":  # an empty file holds nothing to lose: it is a cache of no scores
        assert read_cache_file(str(path)) == ([], b"", 0)
        return
    with pytest.raises(CacheFileError, match=rf"{path} is not a score cache.*left as it is"):
        ResumableScorer(scorer, str(path)).score(["a ."], ["b ."])
    assert path.read_bytes() == content.encode("utf-8")
    data = write_fixture_files(tmp_path)["summeval"]
    meta = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--no-detokenize", "--data", f"summeval={data}"]
    assert main([*meta, "-o", str(tmp_path / "out"), "--cache", str(path)]) == 2
    assert f"{path} is not a score cache" in capsys.readouterr().err
    assert path.read_bytes() == content.encode("utf-8")


def test_a_torn_last_line_of_a_cache_is_repaired_and_reported(tmp_path):
    path = tmp_path / "cache.jsonl"
    whole = header_line() + "\n" + score_line(-1.5) + "\n"
    for torn in ('{"sc', '{"scorer": "0123', score_line(2.0)[:-3]):
        path.write_text(whole + torn, encoding="utf-8")
        entries, tail, size = read_cache_file(str(path))
        assert tail == torn.encode() and size == len(whole) + len(torn)
        assert [entry["score"] for entry in entries if entry["pair"]] == [-1.5]
    path.write_text(torn := '{"scorer": "01', encoding="utf-8")  # an interrupted first write
    assert read_cache_file(str(path)) == ([], torn.encode(), len(torn))
    path.write_text(whole + "a note", encoding="utf-8")
    with pytest.raises(CacheFileError, match=r"ends in text that is not a line of a cache \(line 3\)"):
        read_cache_file(str(path))
    assert path.read_text(encoding="utf-8") == whole + "a note"


@pytest.mark.parametrize("score", ['"-1.5"', "true", "false", "null", "NaN", "Infinity", "-Infinity", "1e999", "[1]"])
def test_a_cache_score_that_is_not_a_finite_number_is_refused_naming_file_and_line(tmp_path, score):
    path = tmp_path / "cache.jsonl"
    path.write_text("\n".join([header_line(), score_line(0.5), score_line(score)]) + "\n", encoding="utf-8")
    with pytest.raises(CacheFileError, match=rf"{path} line 3 is damaged \(its score .* is not a finite number\)"):
        read_cache_file(str(path))


@pytest.mark.parametrize("score, value", [("-1.5", -1.5), ("-2", -2.0), ("0", 0.0), ("-1.25e-3", -0.00125)])
def test_a_cache_score_that_is_a_number_is_read_as_it_is(tmp_path, score, value):
    path = tmp_path / "cache.jsonl"
    path.write_text("\n".join([header_line(), score_line(score)]) + "\n", encoding="utf-8")
    entries, _, _ = read_cache_file(str(path))
    assert [entry["score"] for entry in entries if entry["pair"]] == [value]


ASPECTS = ("coherence", "consistency", "fluency", "relevance")


def reused_record_pickle(records):
    """A data.pkl whose `records` documents are all one record, pickled once and then referenced through the memo."""
    record = {
        "src": "a long source text . " * 500,
        "ref_summ": "a reference .",
        "sys_summs": {"M0": {"sys_summ": "a summary .", "scores": dict.fromkeys(ASPECTS, 1.0)}},
    }
    return pickle.dumps({f"doc-{index}": record for index in range(records)}, protocol=4)


def test_a_pickle_that_unfolds_far_beyond_its_size_is_refused_fast(tmp_path):
    path = tmp_path / "bomb.pkl"
    path.write_bytes(reused_record_pickle(10_000))
    assert path.stat().st_size < 200_000  # while its data holds 10,000 sources of 10,500 characters each
    started = time.perf_counter()
    with pytest.raises(BenchmarkDataError, match=rf"{path} unfolds into more than .* reuses the same records"):
        load_benchmark("summeval", data_file=str(path))
    assert time.perf_counter() - started < 5
    loop = []
    loop.append(loop)  # a list that holds itself unfolds without end
    path.write_bytes(pickle.dumps({"doc": loop}))
    with pytest.raises(BenchmarkDataError, match="unfolds into more than"):
        read_release_pickle(str(path))


def test_a_pickle_that_names_a_class_or_function_is_refused(tmp_path):
    path = tmp_path / "code.pkl"
    path.write_bytes(pickle.dumps({"doc": os.getcwd}))
    with pytest.raises(BenchmarkDataError, match=r"refusing to unpickle .*getcwd"):
        read_release_pickle(str(path))


def test_a_pickle_of_few_reused_records_loads_as_plain_data(tmp_path):
    path = tmp_path / "few.pkl"
    path.write_bytes(reused_record_pickle(3))
    dataset = load_benchmark("summeval", data_file=str(path))
    assert len(dataset) == 3 and set(dataset["doc_id"]) == {"doc-0", "doc-1", "doc-2"}


@pytest.mark.parametrize(
    "content, expected",
    [
        ([1, 2], "holds a list, not a state dict"),
        (torch.zeros(3), "holds a Tensor, not a state dict"),
        (5, "holds an int, not a state dict"),
        ({"weight": [1.0]}, "its entry 'weight' holds a list"),
        (b"not a pickle at all", "is not a state dict torch.load can read as weights only"),
        ("a class", "is not a state dict torch.load can read as weights only"),
    ],
)
def test_loading_a_file_that_is_not_a_state_dict_says_what_it_holds(tmp_path, scorer, content, expected):
    path = tmp_path / "weights.pth"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content == "a class":  # weights_only never unpickles a class
        torch.save(threading.Thread, path)
    else:
        torch.save(content, path)
    with pytest.raises(CheckpointLoadError) as raised:
        scorer.load(str(path))
    message = str(raised.value)
    assert expected in message and str(path) in message
    assert "weights_only=False" not in message and "weights_only` set to `False" not in message


@pytest.mark.parametrize("hostile", ENDLESS)
@pytest.mark.xdist_group("evaluate")
def test_the_metric_refuses_an_endless_baseline_file(tiny_checkpoint, hostile):
    import evaluate

    metric = evaluate.load(MODULE, tiny_checkpoint, device="cpu")
    started = time.perf_counter()
    with pytest.raises(BaselineError, match=rf"{hostile} is a character device, not a file"):
        metric.compute(predictions=["The cat sat ."], sources=["The cat sat on the mat ."], baseline_path=hostile)
    assert time.perf_counter() - started < 30
