"""The command line's output and limits: -o written atomically, names that would forge TSV rows or columns refused,
read-only outputs, bad arguments and unservable requests refused before any model loads, and -q quiet."""

import errno
import json
import os
import re
import stat
import warnings

import pytest
from support.cli import SOURCES, SYSTEM_A, SYSTEM_B, run_cli
from support.fast_subset import fast_cases

import bart_score
import bart_score.cli
import bart_score.cli.score
import bart_score.scoring.engine
from bart_score.errors import FewerReferencePairsWarning

NO_MODEL = "/nonexistent/checkpoint"  # loading it would fail with exit status 1: a 2 means it was never tried


@pytest.fixture
def inputs(tmp_path):
    for name, lines in (("src.txt", SOURCES), ("sysA.txt", SYSTEM_A), ("sysB.txt", SYSTEM_B)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def main(*args, model):
    try:
        return bart_score.main([args[0], "-m", model, "-q", *args[1:]])
    except SystemExit as exit_:
        return exit_.code


# ---------------------------------------------------------------------------------------------------------------------
# -o: a new file renamed over the old one


def leftovers(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".partial"))


@pytest.mark.parametrize(
    "failure, status",
    [
        (OSError(errno.ENOSPC, "No space left on device"), 1),  # a full disk: a clear line, exit 1
        # Ctrl-C midway: one line, exit 130, the old file untouched
        pytest.param(KeyboardInterrupt(), 130, marks=pytest.mark.slow),
    ],
)
def test_a_failure_while_writing_leaves_the_previous_output_whole(
    inputs, tiny_checkpoint, monkeypatch, capsys, failure, status
):
    output = inputs / "segments.tsv"
    output.write_text("the previous results\n", encoding="utf-8")
    write_segments = bart_score.cli.score.write_segments

    def failing_midway(per_system, ids, output_format, handle):
        write_segments(per_system, ids, output_format, handle)  # everything written, then the failure
        raise failure

    monkeypatch.setattr(bart_score.cli.score, "write_segments", failing_midway)
    arguments = ("score", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), "-o", str(output))
    assert main(*arguments, model=tiny_checkpoint) == status
    said = "interrupted" if status == 130 else f"cannot write {output}: No space left on device"
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"bartscore score: {said}"
    assert output.read_text(encoding="utf-8") == "the previous results\n"
    assert leftovers(inputs) == []


@pytest.mark.slow
def test_a_successful_write_replaces_the_file_keeping_its_permissions_and_links(inputs, tiny_checkpoint):
    real = inputs / "results" / "segments.tsv"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o640)
    link = inputs / "latest.tsv"
    link.symlink_to(real)
    arguments = ("score", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), "-o", str(link))
    assert main(*arguments, model=tiny_checkpoint) == 0
    assert link.is_symlink() and real.read_text(encoding="utf-8").startswith("system\tsegment\tfaithfulness\n")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert leftovers(real.parent) == [] and leftovers(inputs) == []


@pytest.mark.slow
def test_a_new_output_file_gets_the_umasks_permissions(inputs, tiny_checkpoint):
    output = inputs / "new.tsv"
    previous = os.umask(0o022)
    try:
        assert (
            main(
                "score",
                "-s",
                str(inputs / "src.txt"),
                "-t",
                str(inputs / "sysA.txt"),
                "-o",
                str(output),
                model=tiny_checkpoint,
            )
            == 0
        )
    finally:
        os.umask(previous)
    assert stat.S_IMODE(output.stat().st_mode) == 0o644


def test_a_read_only_output_is_refused_before_the_model_loads(inputs, capsys):
    output = inputs / "segments.tsv"
    output.write_text("keep me\n", encoding="utf-8")
    output.chmod(0o444)
    arguments = ("score", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), "-o", str(output))
    assert main(*arguments, model=NO_MODEL) == 2
    assert f"cannot write -o {output}: the file exists and is read-only" in capsys.readouterr().err
    assert output.read_text(encoding="utf-8") == "keep me\n"


# ---------------------------------------------------------------------------------------------------------------------
# Names written into the output as they are


@pytest.mark.parametrize(
    "file_name, shown",
    [("sys\tA.txt", r"'sys\\tA.txt' holds '\\t'"), ("sys\nA.txt", r"holds '\\n'"), ("sys\rA.txt", r"holds '\\r'")],
)
def test_a_hypothesis_file_name_that_would_forge_rows_or_columns_is_refused(inputs, capsys, file_name, shown):
    (inputs / file_name).write_text("\n".join(SYSTEM_A) + "\n", encoding="utf-8")
    assert main("score", "-s", str(inputs / "src.txt"), "-t", str(inputs / file_name), model=NO_MODEL) == 2
    assert re.search(r"the system name .*" + shown + r", which would break the output's lines", capsys.readouterr().err)


def test_a_file_name_that_is_not_unicode_is_refused(inputs, capsys):
    name = os.fsdecode(b"sys\xff.txt")  # an undecodable byte arrives as the lone surrogate \udcff
    (inputs / name).write_text("\n".join(SYSTEM_A) + "\n", encoding="utf-8")
    assert (
        main(
            "compare", "-s", str(inputs / "src.txt"), "-t", str(inputs / name), str(inputs / "sysB.txt"), model=NO_MODEL
        )
        == 2
    )
    assert "holds '\\udcff', which is not valid Unicode text" in capsys.readouterr().err


@pytest.mark.parametrize(
    "header, row",
    [
        ('source,"sys\nA"', "s,o"),
        ('source,"sys\tA"', "s,o"),
        ("source,sys\u2028A", "s,o"),
    ],
)
def test_a_column_name_that_would_forge_rows_or_columns_is_refused_by_both_commands(tmp_path, capsys, header, row):
    path = tmp_path / "table.csv"
    path.write_text(f"{header},other\n{row},x\n", encoding="utf-8")
    for command in ("score", "compare"):
        assert main(command, "-i", str(path), model=NO_MODEL) == 2
        assert "the system name 'sys" in capsys.readouterr().err


@pytest.mark.parametrize(  # the fast subset's: a line break that str.splitlines() sees and "\n" does not
    "segment_id", fast_cases(["doc\t1", "doc\n1", "doc\r\n1", "doc\x0b1", "doc\u20281", "\x85"], ["doc\u20281"])
)
def test_ids_that_would_forge_tsv_rows_or_columns_are_refused_and_kept_in_jsonl(
    tmp_path, tiny_checkpoint, capsys, segment_id
):
    path = tmp_path / "table.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "source": s, "sys": h}) + "\n"
            for i, s, h in [(segment_id, "S.", "H."), ("x", "T.", "I.")]
        ),
        encoding="utf-8",
    )
    assert main("score", "-i", str(path), model=NO_MODEL) == 2
    assert "row 1's id" in capsys.readouterr().err
    output = tmp_path / "segments.jsonl"
    assert main("score", "-i", str(path), "-f", "jsonl", "-o", str(output), model=tiny_checkpoint) == 0
    assert [json.loads(line)["id"] for line in output.read_text(encoding="utf-8").splitlines()] == [segment_id, "x"]


# ---------------------------------------------------------------------------------------------------------------------
# Requests that cannot be served, refused before any work


@pytest.mark.parametrize("resamples", ["0", "100001", "1000000000000"])
def test_bootstrap_resamples_are_bounded(inputs, capsys, resamples):
    arguments = ("compare", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), str(inputs / "sysB.txt"))
    assert main(*arguments, "--resamples", resamples, model=NO_MODEL) == 2
    assert "--resamples must be from 1 to 100,000" in capsys.readouterr().err


@pytest.mark.slow
def test_the_largest_number_of_resamples_is_served(inputs, tiny_checkpoint, capsys):
    arguments = ("compare", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), str(inputs / "sysB.txt"))
    assert main(*arguments, "--resamples", "100000", "--json", model=tiny_checkpoint) == 0
    assert json.loads(capsys.readouterr().out)["directions"]["faithfulness"]["resamples"] == 100_000


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"source": "a", "sys": ' + "[" * 100_000 + "]" * 100_000 + "}", r"line 1 nests JSON too deeply"),
        ('{"source": "a", "sys": ' + "9" * 5000 + "}", r"line 1 is not valid JSON"),
        ('{"source": "a\\ud800", "sys": "b"}', r"row 1, column 'source' holds '\\ud800' at character 1"),
        ('{"source": "a", "sys\\udc80": "b"}', r"line 1: the column name 'sys\\udc80' holds '\\udc80'"),
    ],
)
def test_jsonl_that_cannot_be_read_is_a_usage_error_naming_the_line(tmp_path, capsys, line, message):
    path = tmp_path / "table.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert main("score", "-i", str(path), model=NO_MODEL) == 2
    stderr = capsys.readouterr().err
    assert re.search(message, stderr) and "Traceback" not in stderr


def test_a_missing_table_is_a_usage_error(tmp_path, capsys):
    assert main("score", "-i", str(tmp_path / "missing.csv"), model=NO_MODEL) == 2
    assert f"cannot read --input {tmp_path / 'missing.csv'}: No such file or directory" in capsys.readouterr().err


def test_a_prompt_phrase_with_undecodable_bytes_is_a_usage_error(inputs, capsys):
    phrase = os.fsdecode(b"In other words\xff")
    arguments = ("score", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), "--prompt-phrases", phrase)
    assert main(*arguments, model=NO_MODEL) == 2
    assert "prompt[0] holds '\\udcff'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--batch-size", "0"], r"--batch-size\b.* must be a positive integer"),
        (["--device", "gpu0"], "--device"),
        (["-d", "faithfulness,faithfulness"], re.escape("-d/--directions: directions[1] is 'faithfulness' again")),
        (["--baseline", "{folder}/missing.json"], "no baseline file at"),
        (["--rescale"], "holds no baseline file"),
        (["--rescale", "corpus", "--rescale-pairs", "0"], r"--rescale-pairs\b.* must be a positive integer"),
        (["-s", "/dev/zero"], "--sources /dev/zero is a character device"),
    ],
)
def test_a_bad_argument_fails_before_any_model_loads(
    copying_checkpoint, inputs, tmp_path, monkeypatch, no_model_load, capsys, arguments, message
):
    monkeypatch.setenv("BARTSCORE_BASELINES", str(tmp_path / "no-baselines-yet"))
    arguments = [a.format(folder=tmp_path) for a in arguments]
    source = [] if "-s" in arguments else ["-s", str(inputs / "src.txt")]
    systems = [str(inputs / "sysA.txt"), str(inputs / "sysB.txt")]
    for command in ("score", "compare"):
        assert main(command, *source, "-t", *systems, *arguments, model=copying_checkpoint) == 2
        error = capsys.readouterr().err
        assert re.search(message, error), error


def test_a_missing_cuda_device_is_named_by_its_flag_on_the_command_line(copying_checkpoint, inputs, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip(reason="this machine has a CUDA device")
    texts = str(inputs / "src.txt")
    assert main("score", "-s", texts, "-t", texts, "--device", "cuda", model=copying_checkpoint) == 2
    error = capsys.readouterr().err
    assert (
        "--device 'cuda' was asked for" in error
        and "ask for --device cpu, or leave it out" in error
        and "device=" not in error
    )


# ---------------------------------------------------------------------------------------------------------------------
# What the output says


@pytest.mark.slow
def test_segments_count_from_1_as_the_messages_count_them(inputs, tiny_checkpoint, capsys):
    texts = ("-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), str(inputs / "sysB.txt"))
    assert main("score", *texts, model=tiny_checkpoint) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0][:2] == ["system", "segment"]
    assert [(row[0], row[1]) for row in rows[1:]] == [
        (name, str(n)) for name in ("sysA.txt", "sysB.txt") for n in (1, 2, 3)
    ]
    assert main("score", *texts, "-f", "jsonl", model=tiny_checkpoint) == 0
    assert [json.loads(line)["segment"] for line in capsys.readouterr().out.splitlines()] == [1, 2, 3] * 2
    assert main("score", *texts, "--max-chars", "25", model=NO_MODEL) == 2  # the second source is the long one
    assert "the source of segment 2 has 31 characters" in capsys.readouterr().err


@pytest.mark.slow
def test_a_tie_has_no_winner_in_json(inputs, tiny_checkpoint, capsys):
    (inputs / "same.txt").write_text((inputs / "sysA.txt").read_text(encoding="utf-8"), encoding="utf-8")
    arguments = ("compare", "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), str(inputs / "same.txt"))
    assert main(*arguments, "--json", model=tiny_checkpoint) == 0
    text = capsys.readouterr().out
    (pair,) = json.loads(text)["directions"]["faithfulness"]["pairs"]
    assert pair["delta"] == 0 and pair["winner"] is None and '"winner": null' in text
    assert main(*arguments, model=tiny_checkpoint) == 0
    assert re.search(r"sysA\.txt +same\.txt +\+0\.0000 .* tie$", capsys.readouterr().out, re.MULTILINE)


def corpus_notes(inputs, model, *flags):
    """The FewerReferencePairsWarnings that `score --rescale corpus` lets through to be printed."""
    texts = ("-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), str(inputs / "sysB.txt"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main("score", *texts, "--rescale", "corpus", *flags, model=model) == 0
    return [str(warning.message) for warning in caught if warning.category is FewerReferencePairsWarning]


@pytest.mark.slow
def test_the_corpus_note_is_printed_only_when_the_pairs_were_asked_for(inputs, copying_checkpoint):
    """Three segments give far fewer reference pairs than the default budget (1000): that is no news to someone who
    asked for nothing, but it is to someone who gave --rescale-pairs."""
    assert corpus_notes(inputs, copying_checkpoint) == []
    (note,) = corpus_notes(inputs, copying_checkpoint, "--rescale-pairs", "5000")
    assert re.match(r"BARTScore: 5000 reference pairs were asked for, but the texts give only \d+ distinct", note)
    assert corpus_notes(inputs, copying_checkpoint, "--rescale-pairs", "2") == []  # 2 fit: nothing to say


def test_only_the_unasked_corpus_note_is_hidden():
    parse = bart_score.cli.build_parser().parse_args
    texts = ["-s", "s.txt", "-t", "t.txt"]
    assert bart_score.cli.unasked_notes(parse(["score", *texts, "--rescale", "corpus"])) == (
        FewerReferencePairsWarning,
    )
    assert bart_score.cli.unasked_notes(parse(["compare", *texts])) == (FewerReferencePairsWarning,)
    assert bart_score.cli.unasked_notes(parse(["score", *texts, "--rescale-pairs", "9"])) == ()
    assert bart_score.cli.unasked_notes(parse(["baseline", "--corpus", "c.txt"])) == ()  # a baseline's own corpus


def test_long_source_counts_are_summed_under_a_line_saying_they_are_counts():
    nan = float("nan")
    per_system = {
        "a": {"faithfulness": [-1.0, -2.0], "faithfulness_sentences": [3, 2], "faithfulness_windows": [9, 4]},
        "b": {"faithfulness": [-3.0, nan], "faithfulness_sentences": [1, 1], "faithfulness_windows": [3, 3]},
    }
    assert bart_score.cli.score.summary_lines(per_system, "SIG") == [
        "system  faithfulness",
        "a            -1.5000",
        "b                nan",
        "counts of --long-source windows, summed over the 2 segment(s):",
        "system  faithfulness_sentences  faithfulness_windows",
        "a                            5                    13",
        "b                            2                     6",
        "signature: SIG",
    ]


# ---------------------------------------------------------------------------------------------------------------------
# -q


@pytest.mark.slow
def test_quiet_means_nothing_on_stderr(inputs, tiny_checkpoint):
    code, stdout, stderr = run_cli(
        "score", "-m", tiny_checkpoint, "-s", str(inputs / "src.txt"), "-t", str(inputs / "sysA.txt"), "-q"
    )
    assert code == 0 and stdout.startswith("system\tsegment\tfaithfulness\n")
    summary = "\n".join(
        line for line in stderr.splitlines() if not line.startswith(("system", "sysA.txt", "signature"))
    )
    assert summary == "", stderr  # the means and the signature only: no loading or progress bars
