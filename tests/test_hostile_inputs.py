"""Hostile file inputs, as classes: endless files (devices, pipes) and files over the size limit given to every flag
and library reader; JSON nested too deeply wherever JSON is read; a score cache that is not ours, or holds scores
that are not numbers; a data.pkl that unfolds into far more data than its size; a state dict file that is none. Each
is refused with a clear error naming the file (and the flag, on the command line) before any model loads. Numbers and
device indexes are read in ASCII digits of bounded length, wherever they are parsed."""

import contextlib
import json
import os
import pickle
import re
import threading
import time

import pytest
import torch
from support.fast_subset import fast_cases
from support.meta_eval_fixtures import write_fixture_files
from support.metric import MODULE

import bart_score
from bart_score.baselines.files import load_baseline
from bart_score.cli import main
from bart_score.corpora._reading import MAX_JSON_DEPTH, parse_json, read_bounded
from bart_score.corpora.corpus import read_plain_corpus, read_texts
from bart_score.corpora.table_files import read_table
from bart_score.errors import (
    BaselineError,
    BenchmarkDataError,
    CacheFileError,
    CheckpointLoadError,
    InputError,
)
from bart_score.messages import FileName, Mention
from bart_score.meta_eval._layouts import read_release_pickle
from bart_score.meta_eval.benchmarks import load_benchmark
from bart_score.options import EngineOptions
from bart_score.scoring.score_cache import ResumableScorer, read_cache_file

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


@pytest.mark.parametrize("hostile", fast_cases([*ENDLESS, "oversized"], ["/dev/zero"]))
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
        with pytest.raises(kind, match=r"is a character device, not a file") as raised:
            read()
        named = [part for part in raised.value.parts if isinstance(part, FileName)]
        assert hostile in str(raised.value) and named in ([], [FileName(hostile)]), raised.value.parts


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
    with pytest.raises(InputError, match=r"deep.jsonl' line 1 nests JSON too deeply") as raised:
        read_table(str(table))
    assert raised.value.parts[0] == FileName(str(table))  # the file, as data: each front end names it its own way
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


@pytest.mark.parametrize("points_at", ["a cache", "no file yet"])
def test_a_cache_named_by_a_symbolic_link_is_refused_and_nothing_written_through_it(
    tmp_path, scorer, points_at, capsys, no_model_load
):
    target = tmp_path / "elsewhere.jsonl"
    if points_at == "a cache":
        target.write_text(header_line() + "\n", encoding="utf-8")
    link = tmp_path / "cache.jsonl"
    link.symlink_to(target)
    before = target.read_bytes() if target.exists() else None
    refused = rf"the score cache '{re.escape(str(link))}' is a symbolic link, and a cache is not written through one"
    with pytest.raises(CacheFileError, match=refused):
        ResumableScorer(scorer, str(link)).score(["a ."], ["b ."])
    with pytest.raises(CacheFileError, match=refused):  # a link made after the file was read
        ResumableScorer(scorer, str(link))._append({}, first=True)
    data = write_fixture_files(tmp_path)["summeval"]
    meta = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--no-detokenize", "--data", f"summeval={data}"]
    assert main([*meta, "-o", str(tmp_path / "out"), "--cache", str(link)]) == 2
    error = capsys.readouterr().err
    assert str(link) in error and "is a symbolic link, and a cache is not written through one" in error
    assert (target.read_bytes() if target.exists() else None) == before


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


@pytest.mark.slow
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


# -- numbers in ASCII digits, of bounded length -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "device, message",
    [
        ("cuda:٣", r"device 'cuda:٣' is not a device; use 'cpu'"),  # \d took it, and torch raised a RuntimeError
        ("cuda:99999999999999999999", r"its index is over torch's largest, 127"),
        ("cuda:128", r"its index is over torch's largest, 127"),  # torch.device("cuda:128") is cuda:-128
        ("cuda:01", r"device 'cuda:01' is not a device"),
        (128, r"device 128 is not a device: its index is over torch's largest, 127"),
        ("cuda:" + "9" * 5000, r"\(5,005 characters\) is not a device: its index is over torch's largest, 127"),
    ],
)
def test_a_device_index_is_ascii_digits_up_to_torchs_largest(device, message):
    with pytest.raises(InputError, match=message):
        EngineOptions(device=device).check()
    assert EngineOptions(device="cuda:127").device == "cuda:127"


@pytest.mark.parametrize("device", ["cuda:٣", "cuda:99999999999999999999"])
def test_the_command_line_refuses_a_device_of_other_digits_before_any_model(device, files, capsys, no_model_load):
    texts = files["texts"]
    assert main(["score", "-m", NO_MODEL, "-s", texts, "-t", texts, "--device", device]) == 2
    error = capsys.readouterr().err
    assert error.startswith("bartscore score: error: --device ") and len(error.strip().splitlines()) == 1, error


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--alpha", "٠.٠٥"),
        ("--alpha", "0_1"),
        ("--alpha", "nan"),
        ("--alpha", " 0.05"),
        ("--alpha", "0." + "5" * 100),
        ("--batch-size", "9" * 19),
        ("--batch-size", "9" * 5000),  # int() raises its own ValueError past 4,300 digits
    ],
)
def test_number_flags_take_bounded_ascii_numbers_only(flag, value, files, capsys):
    texts = files["texts"]
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["compare", "-m", NO_MODEL, "-s", texts, "-t", texts, texts, flag, value])
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith(f"bartscore compare: error: argument {flag}: expected a ") and "Traceback" not in said
    assert ("at most 18 ASCII digits" in said) == (flag == "--batch-size")


@pytest.mark.parametrize("cell", ["٣", "0_5", "nan", "1e999", "0x10", "5" * 70])
def test_a_metrics_csv_score_is_an_ascii_number(cell, files, tmp_path, capsys, no_model_load):
    metrics = tmp_path / "metrics.csv"
    metrics.write_text(f"doc_id,system,other\nd1,M0,{cell}\n", encoding="utf-8")
    meta = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--no-detokenize", "-o", str(tmp_path / "out")]
    assert main([*meta, "--data", f"summeval={files['data']}", "--metrics-csv", str(metrics)]) == 2
    error = capsys.readouterr().err
    assert f"line 2, column 'other': '{cell}' is not a number" in error and len(error.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["WORLD_SIZE", "LOCAL_RANK"])
@pytest.mark.parametrize("value", ["٢", "2x", "-1"])
def test_a_launchers_number_in_the_environment_is_ascii_digits(name, value, monkeypatch):
    from bart_score.scaling._distributed import _launcher_number

    monkeypatch.setenv(name, value)
    with pytest.raises(InputError, match=rf"^the environment variable {name} is '{value}', not a whole number"):
        _launcher_number(name, 0)
    monkeypatch.setenv(name, "2")
    assert _launcher_number(name, 0) == 2


def test_a_reference_columns_number_and_a_plain_number_cell_are_ascii_digits(tmp_path):
    from bart_score.corpora._outputs import spreadsheet_cell
    from bart_score.corpora.table_files import read_table_corpus

    table = tmp_path / "table.csv"
    table.write_text("source,reference_1,reference_٣\nA cat sat.,The cat sat.,A cat.\n", encoding="utf-8")
    corpus = read_table_corpus(str(table))
    assert corpus.references == [["The cat sat."]] and list(corpus.systems) == ["reference_٣"]
    assert spreadsheet_cell("-1.5") == "-1.5" and spreadsheet_cell("-٣") == "'-٣"


# -- a checkpoint's layers, counted where a layer's number stands -----------------------------------------------------


def test_a_layer_is_counted_from_the_number_after_a_stack_of_layers():
    from bart_score.models.loading import _layer_numbers

    layers = [
        "model.layers.0.self_attn.q_proj.weight",
        "model.decoder.layers.1.fc1.weight",
        "encoder.block.2.layer.0.SelfAttention.q.weight",  # T5: block 2, and its sub-layer 0 under layer
        "transformer.h.3.attn.c_attn.weight",
        "blk.4.ffn_up.weight",
        "model.layers.5.mlp.experts.63.w1.weight",  # an expert's number is not a layer's
    ]
    assert _layer_numbers(layers) == {0, 1, 2, 3, 4, 5}
    others = ["pad.19999", "model.embed_tokens.weight", "layers.٣.weight", "layers.1234567890.weight", "h.-1.w"]
    assert _layer_numbers(others) == set()


@pytest.fixture
def padded_llama(tmp_path_factory, tmp_path):
    """A tiny Llama of 2 layers whose config says 20,000, beside an extra weights file of 20,000 tensors named pad.0
    to pad.19999: the probe that any number in any name let through to a model of 20,000 layers."""
    from support.header_probes import padded_layers_probe
    from support.models import tiny_checkpoint_for

    return padded_layers_probe(tiny_checkpoint_for(tmp_path_factory, "llama"), tmp_path / "llama")


LAYERS_REFUSED = r"is damaged: its config's num_hidden_layers is 20,000, but its weights hold 2 numbered layers"


@pytest.mark.slow
def test_numbers_outside_a_layers_place_do_not_make_layers(padded_llama, monkeypatch):
    import transformers

    def refuse(*args, **kwargs):
        raise AssertionError("a model was built before the checkpoint was refused")

    for build in ("from_config", "from_pretrained"):  # from_config: the meta-device build of the parameter check
        monkeypatch.setattr(transformers.AutoModelForCausalLM, build, refuse)
    with pytest.raises(CheckpointLoadError, match=LAYERS_REFUSED):
        bart_score.BARTScorer(checkpoint=str(padded_llama), device="cpu")


@pytest.mark.slow
def test_numbers_outside_a_layers_place_are_refused_by_the_command_line_in_bounded_memory(padded_llama, tmp_path):
    from support.cli import run_cli_capped

    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    texts = str(tmp_path / "src.txt")
    status, error, _, peak = run_cli_capped(
        "score", "-m", str(padded_llama), "-s", texts, "-t", texts, "-q", memory=3 << 30, seconds=60
    )
    assert status == 1 and re.search(LAYERS_REFUSED, error) and len(error.strip().splitlines()) == 1, (status, error)
    assert peak < 1 << 30, f"{peak:,} bytes resident"


@pytest.fixture
def llama_padded_in_place(tmp_path_factory, tmp_path):
    """The probe with its numbers where a layer's number stands: 20,000 one-value tensors named model.layers.0.pad
    to model.layers.19999.pad, which the count of layers takes for 20,000 layers."""
    from support.header_probes import padded_layers_probe
    from support.models import tiny_checkpoint_for

    return padded_layers_probe(
        tiny_checkpoint_for(tmp_path_factory, "llama"), tmp_path / "llama", name="model.layers.{}.pad"
    )


LAYERS_OVER_THE_LIMIT = r"is refused: its config's num_hidden_layers is 20,000, over the limit of 1,024 layers"


@pytest.mark.slow
def test_layers_named_in_a_layers_place_are_bounded_before_any_model_is_built(llama_padded_in_place, monkeypatch):
    """They passed the count of layers, and the meta-device build of 20,000 layers took 100 s and 1.1 GB."""
    import transformers

    from bart_score.models.loading import MAX_LAYERS, _layer_numbers

    def refuse(*args, **kwargs):
        raise AssertionError("a model was built before the checkpoint was refused")

    assert _layer_numbers(f"model.layers.{index}.pad" for index in range(20_000)) == set(range(20_000))
    for build in ("from_config", "from_pretrained"):
        monkeypatch.setattr(transformers.AutoModelForCausalLM, build, refuse)
    with pytest.raises(CheckpointLoadError, match=LAYERS_OVER_THE_LIMIT):
        bart_score.BARTScorer(checkpoint=str(llama_padded_in_place), device="cpu")
    assert MAX_LAYERS >= 8 * 126  # the deepest real models (Llama 3.1 405B: 126 layers) load


@pytest.mark.slow
def test_layers_named_in_a_layers_place_are_refused_by_the_command_line_in_bounded_memory(
    llama_padded_in_place, tmp_path
):
    from support.cli import run_cli_capped

    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    texts = str(tmp_path / "src.txt")
    status, error, _, peak = run_cli_capped(
        "score", "-m", str(llama_padded_in_place), "-s", texts, "-t", texts, "-q", memory=3 << 30, seconds=60
    )
    assert status == 1 and re.search(LAYERS_OVER_THE_LIMIT, error) and len(error.strip().splitlines()) == 1, error
    assert peak < 1 << 30, f"{peak:,} bytes resident"


# -- texts bounded before they are split or tokenized ----------------------------------------------------------------


def test_a_text_over_max_chars_is_refused_naming_it_before_it_is_split_or_tokenized(scorer, monkeypatch):
    import bart_score.long_documents.windows

    def refuse(*args, **keywords):
        raise AssertionError("a text was split or tokenized before its length was checked")

    monkeypatch.setattr(bart_score.long_documents.windows, "split", refuse)
    monkeypatch.setattr(scorer, "_plan", refuse)
    texts = {"predictions": ["A cat sat.", "The cat sat on the mat."], "sources": ["A cat sat on a mat.", "A dog."]}
    windows = {"long_source": "windows", "retriever": "bm25"}
    for keywords, name, index, said in (
        (texts, "predictions", 1, "has 23 characters"),
        (
            {"predictions": ["A cat.", "A dog."], "sources": ["A cat sat on a mat all day.", "A dog."]},
            "sources",
            0,
            "has 27 characters",
        ),
        ({"predictions": ["A cat."], "references": [["A cat.", "The cat sat on the mat."]]}, "references", 0, "holds"),
    ):
        for extra in ({}, windows if "sources" in keywords else {}):
            with pytest.raises(InputError) as raised:
                scorer.score_directions(**keywords, **extra, max_chars=20)
            assert raised.value.option == name and raised.value.parts[0] == Mention(name, index=index)
            assert str(raised.value).startswith(f"{name}[{index}] {said}")
            assert str(raised.value).endswith("more than max_chars=20; raise max_chars, or shorten or divide the text")
    monkeypatch.undo()
    assert len(scorer.score_directions(**texts, max_chars=23)["faithfulness"]) == 2  # overridable; at most is taken
    with pytest.raises(InputError, match=r"texts\[1\] has 23 characters, more than max_chars=20"):
        bart_score.build_baseline(scorer, ["A cat sat.", "The cat sat on the mat."], corpus_file="t", max_chars=20)


def test_a_10_mb_prediction_is_refused_at_once_by_default(scorer):
    """The probe: a 10 MB prediction took 70 s and 2.4 GB to tokenize; the default max_chars refuses it unread."""
    started = time.perf_counter()
    with pytest.raises(InputError, match=r"predictions\[0\] has 10,000,000 characters, more than max_chars=1000000"):
        scorer.score_directions(["word " * 2_000_000], sources=["A cat sat."])
    assert time.perf_counter() - started < 5


def test_the_command_line_refuses_a_text_over_max_chars_before_the_model_loads(files, capsys, no_model_load):
    folder = files["folder"]
    (folder / "long.txt").write_text("The cat sat on the mat .\n" + "word " * 10 + "\n", encoding="utf-8")
    texts, long = files["texts"], str(folder / "long.txt")
    for arguments, said in (
        (["-s", texts, "-t", long], "system 'long.txt', segment 2 has 50 characters"),
        (["-s", long, "-t", texts], "the source of segment 2 has 50 characters"),
        (["-r", long, "-t", texts], "a reference of segment 2 has 50 characters"),
    ):
        assert main(["score", "-m", NO_MODEL, *arguments, "--max-chars", "40"]) == 2
        error = capsys.readouterr().err
        assert f"error: {said}, more than --max-chars 40; raise --max-chars, or shorten or divide the text" in error
    assert main(["score", "-m", NO_MODEL, "-s", texts, "-t", long, "--max-chars", "50"]) == 1  # then the model
    assert NO_MODEL in capsys.readouterr().err


@pytest.mark.slow
def test_a_10_mb_system_output_is_refused_by_the_command_line_in_bounded_memory_and_time(tmp_path):
    """The probe (a 10 MB prediction took 70 s and 2.4 GB), refused by the default --max-chars before any model."""
    from support.cli import run_cli_capped

    (tmp_path / "src.txt").write_text("The cat sat on the mat.\n", encoding="utf-8")
    (tmp_path / "sys.txt").write_text("word " * 2_000_000 + "\n", encoding="utf-8")
    arguments = ["score", "-m", NO_MODEL, "-s", str(tmp_path / "src.txt"), "-t", str(tmp_path / "sys.txt")]
    status, error, seconds, peak = run_cli_capped(*arguments, "-q", memory=3 << 30, seconds=60)
    assert status == 2 and "10,000,000 characters, more than --max-chars 1000000" in error, (status, error)
    assert len(error.strip().splitlines()) == 1 and seconds < 60
    assert peak < 1 << 30, f"{peak:,} bytes resident"
