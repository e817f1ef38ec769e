"""Every file the command line writes follows one set of rules (bart_score.corpora._outputs): score's -o, baseline's -o
and the library's write_baseline, meta-eval's PREFIX.json/.csv and --cache. Only a regular file is replaced (never a
device, a FIFO or a folder), a read-only file, an empty name or a file that is also an input is refused with exit status
2 before any model loads, links keep pointing where they did, permissions are the old file's or the umask's, and every
JSON written is valid JSON (NaN and infinity as null). -d is checked as strictly: not empty, no direction twice."""

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import ROOT, SOURCES, SYSTEM_A, SYSTEM_B, run_cli
from support.meta_eval_fixtures import write_fixture_files

import bart_score
from bart_score.baselines import files as baseline_files
from bart_score.corpora import _outputs
from bart_score.corpora._outputs import json_text, write_atomically
from bart_score.messages import Mention
from bart_score.options import ScoringOptions

NO_MODEL = "/nonexistent/checkpoint"  # loading it would fail with exit status 1: a 2 means it was never tried
TEXTS = ["The cat sat on the mat.", "Rain is expected in the north tomorrow.", "Good.", "A report says it was high."]


@pytest.fixture
def folder(tmp_path):
    for name, lines in (
        ("src.txt", SOURCES),
        ("sysA.txt", SYSTEM_A),
        ("sysB.txt", SYSTEM_B),
        ("ref.txt", SOURCES),
        ("texts.txt", TEXTS),
    ):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def main(argv):
    try:
        return bart_score.main(argv)
    except SystemExit as exit_:
        return exit_.code


def command(subcommand, folder, output, *extra):
    """The subcommand's command line writing `output` (meta-eval: output is PREFIX.json; its PREFIX is given)."""
    if subcommand == "score":
        return ["score", "-m", NO_MODEL, "-s", str(folder / "src.txt"), "-t", str(folder / "sysA.txt"), "-o", output]
    if subcommand == "baseline":
        return ["baseline", "-m", NO_MODEL, "--corpus", str(folder / "texts.txt"), "-o", output, *extra]
    data = write_fixture_files(folder)["summeval"]
    prefix = output[: -len(".json")] if output.endswith(".json") else output
    return ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--data", f"summeval={data}", "-o", prefix, *extra]


def output_name(subcommand, name):
    return f"{name}.json" if subcommand == "meta-eval" else name


SUBCOMMANDS = ("score", "baseline", "meta-eval")


# ---------------------------------------------------------------------------------------------------------------------
# What may be replaced: only a regular file, writable, and not an input


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
@pytest.mark.parametrize("kind", ["fifo", "device", "link to a device", "folder"])
def test_only_a_regular_file_is_replaced(folder, capsys, subcommand, kind):
    if kind == "device" and subcommand == "meta-eval":
        pytest.skip(reason="meta-eval's -o is a prefix: PREFIX.json is never the device itself (see the link case)")
    target = folder / output_name(subcommand, "out")
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link to a device":
        target.symlink_to(os.devnull)
    path = os.devnull if kind == "device" else str(target)
    assert main(command(subcommand, folder, path)) == 2
    error = capsys.readouterr().err
    assert f"cannot write -o {path}" in error and ("a folder" if kind == "folder" else "not a regular file") in error
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if kind == "link to a device":
        assert target.is_symlink() and os.readlink(target) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert not [name for name in os.listdir(folder) if name.endswith(".partial")]


@pytest.mark.slow
def test_dev_stdout_into_a_pipe_is_refused_up_front_pointing_to_dash(folder):
    arguments = command("score", folder, "/dev/stdout")
    completed = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bartscore.py"), *arguments],
        capture_output=True,  # stdout is a pipe
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert completed.returncode == 2, completed.stderr
    assert "cannot write -o /dev/stdout: it is not a regular file" in completed.stderr
    assert "to write to stdout use -o -" in completed.stderr


@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_a_read_only_file_is_refused(folder, capsys, subcommand):
    target = folder / output_name(subcommand, "out")
    target.write_text("keep me\n", encoding="utf-8")
    target.chmod(0o444)
    assert main(command(subcommand, folder, str(target))) == 2
    assert f"cannot write -o {target}: the file exists and is read-only" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_the_checks_of_an_output_name_it_as_their_caller_does(folder):
    """The library writes no flag: the caller names the output, by its own words or as a Mention of its option."""
    with pytest.raises(bart_score.InputError) as raised:
        _outputs.check_output_path("", Mention("path"))
    assert (str(raised.value), raised.value.option) == ("path is empty; give a file name", "path")
    with pytest.raises(bart_score.InputError) as raised:
        _outputs.check_output_path(str(folder), "the report")
    assert str(raised.value).startswith(f"cannot write the report {folder}: it is a folder") and not raised.value.option
    source = folder / "in.txt"
    source.write_text("text\n", encoding="utf-8")
    with pytest.raises(bart_score.InputError) as raised:
        _outputs.check_not_an_input(str(source), [(Mention("corpus_file"), str(source))], Mention("path"))
    assert raised.value.parts[:3] == (Mention("path"), f" {source} is the same file as ", Mention("corpus_file"))


@pytest.mark.parametrize("subcommand", ["score", "baseline"])
def test_an_empty_output_name_is_refused(folder, capsys, subcommand, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(folder / "defaults"))
    assert main(command(subcommand, folder, "")) == 2
    assert "-o is empty; give a file name" in capsys.readouterr().err
    assert not (folder / "defaults").exists()


@pytest.mark.parametrize("option", ["-o", "--cache"])
def test_meta_eval_refuses_an_empty_prefix_or_cache(folder, capsys, option, monkeypatch):
    monkeypatch.chdir(folder)  # the default outputs would go under meta-eval/ here
    arguments = command("meta-eval", folder, "t")
    assert main([*arguments, option, ""]) == 2
    assert f"{option} is empty; give a file name" in capsys.readouterr().err
    assert not (folder / "meta-eval").exists()


@pytest.mark.parametrize(
    "arguments, option",
    [
        (["-o", "{src}"], "--sources"),
        (["-o", "{sysA}"], "--hypotheses"),
        (["-o", "{link_to_sysB}"], "--hypotheses"),
        (["-r", "{ref}", "-o", "{ref}"], "--references"),
    ],
)
def test_score_refuses_to_write_over_one_of_its_inputs(folder, capsys, arguments, option):
    (folder / "link.txt").symlink_to(folder / "sysB.txt")
    names = {
        "src": str(folder / "src.txt"),
        "sysA": str(folder / "sysA.txt"),
        "link_to_sysB": str(folder / "link.txt"),
        "ref": str(folder / "ref.txt"),
    }
    before = {name: (folder / name).read_bytes() for name in ("src.txt", "sysA.txt", "sysB.txt", "ref.txt")}
    argv = ["score", "-m", NO_MODEL, "-s", names["src"], "-t", names["sysA"], str(folder / "sysB.txt")]
    assert main(argv + [a.format(**names) for a in arguments]) == 2
    assert f"is the same file as {option}" in capsys.readouterr().err
    assert before == {name: (folder / name).read_bytes() for name in before}


def test_score_refuses_to_write_over_its_input_table_or_baseline(folder, capsys):
    table = folder / "table.jsonl"
    table.write_text('{"source": "a b", "sys": "a"}\n{"source": "c d", "sys": "c"}\n', encoding="utf-8")
    assert main(["score", "-m", NO_MODEL, "-i", str(table), "-o", str(table)]) == 2
    assert f"-o {table} is the same file as --input {table}" in capsys.readouterr().err


def test_baseline_refuses_to_write_over_its_corpus(folder, capsys):
    corpus = str(folder / "texts.txt")
    assert main(command("baseline", folder, corpus)) == 2
    assert f"-o {corpus} is the same file as --corpus {corpus}" in capsys.readouterr().err
    assert (folder / "texts.txt").read_text(encoding="utf-8") == "\n".join(TEXTS) + "\n"


def test_meta_eval_refuses_outputs_that_are_its_inputs_or_each_other(folder, capsys):
    data = write_fixture_files(folder)["summeval"]
    metrics = folder / "m.csv"
    metrics.write_text("doc_id,system,m\n", encoding="utf-8")
    base = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "--data", f"summeval={data}"]
    assert main([*base, "-o", str(data)[: -len(".pkl")], "--cache", str(data)]) == 2
    assert f"--cache {data} is the same file as --data summeval= {data}" in capsys.readouterr().err
    assert main([*base, "--metrics-csv", str(metrics), "-o", str(folder / "m")]) == 2
    assert f"-o {folder / 'm.csv'} is the same file as --metrics-csv {metrics}" in capsys.readouterr().err
    assert main([*base, "-o", str(folder / "t"), "--cache", str(folder / "t.json")]) == 2
    assert f"--cache {folder / 't.json'} is the same file as -o {folder / 't.json'}" in capsys.readouterr().err


def test_meta_eval_refuses_a_prefix_under_a_file_up_front(folder, capsys):
    (folder / "afile").write_text("a file, not a folder\n", encoding="utf-8")
    assert main(command("meta-eval", folder, str(folder / "afile" / "t"))) == 2
    error = capsys.readouterr().err
    assert f"{folder / 'afile'} is not a folder" in error and "resume" not in error
    assert main(command("baseline", folder, str(folder / "afile" / "deeper" / "b.json"))) == 2
    assert f"{folder / 'afile'} is not a folder" in capsys.readouterr().err


def test_meta_eval_refuses_a_benchmark_given_twice_with_data(folder, capsys):
    first, second = folder / "a.pkl", folder / "b.pkl"
    data = write_fixture_files(folder)["summeval"]
    for copy in (first, second):
        copy.write_bytes(Path(data).read_bytes())
    argv = ["meta-eval", "-m", NO_MODEL, "-b", "summeval", "-o", str(folder / "t")]
    assert main([*argv, "--data", f"summeval={first}", "--data", f"SummEval={second}"]) == 2
    assert f"summeval was given before (--data summeval={first})" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------------------------
# Writing: links, permissions, no partial files, and the library's write_baseline on the same rules


def document(**extra):
    return {"format": "bartscore-baseline", "values": [1.5, 2.0], **extra}


def test_write_baseline_keeps_links_and_permissions_and_makes_folders(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}\n", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    baseline_files.write_baseline(document(), str(link))
    assert link.is_symlink() and json.loads(real.read_text(encoding="utf-8")) == document()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640

    previous = os.umask(0o022)
    try:
        fresh = tmp_path / "new" / "deeper" / "b.json"
        baseline_files.write_baseline(document(), str(fresh))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644 and json.loads(fresh.read_text(encoding="utf-8")) == document()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial") or name.startswith(".baseline")]


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_write_baseline_and_write_atomically_replace_only_regular_files(tmp_path, kind):
    target = tmp_path / "b.json"
    if kind == "fifo":
        os.mkfifo(target)  # opening it to write would block: the refusal comes before any open
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to(os.devnull)
    for write in (
        lambda: baseline_files.write_baseline(document(), str(target)),
        lambda: write_atomically(str(target), lambda handle: handle.write("x")),
    ):
        with pytest.raises(OSError, match="not a regular file"):
            write()
    assert kind != "fifo" or stat.S_ISFIFO(os.lstat(target).st_mode)
    assert kind != "device" or (target.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode))
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def test_write_baseline_refuses_nan_rather_than_writing_invalid_json(tmp_path):
    target = tmp_path / "b.json"
    with pytest.raises(ValueError, match="not JSON compliant"):
        baseline_files.write_baseline(document(std=math.nan), str(target))
    assert not target.exists() and os.listdir(tmp_path) == []


@pytest.mark.slow
def test_cli_baseline_writes_through_a_link_keeping_its_mode(copying_checkpoint, folder):
    real = folder / "kept" / "real.json"
    real.parent.mkdir()
    real.write_text("{}\n", encoding="utf-8")
    real.chmod(0o604)
    link = folder / "link.json"
    link.symlink_to(real)
    code, stdout, stderr = run_cli(
        "baseline", "-m", copying_checkpoint, "--corpus", str(folder / "texts.txt"), "-q", "--pairs", "8", "-o", link
    )
    assert code == 0, stderr
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o604
    assert baseline_files.load_baseline(str(link)).document["format"] == "bartscore-baseline"
    assert f"written to {link}" in stdout


# ---------------------------------------------------------------------------------------------------------------------
# Valid JSON everywhere


def strict_json(text):
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the JSON written"))


def test_json_text_writes_nan_and_infinities_as_null_at_any_depth():
    value = {"a": math.nan, "b": [1.0, -math.inf, {"c": (math.inf, 2)}], "d": "NaN", "e": None}
    assert strict_json(json_text(value)) == {"a": None, "b": [1.0, None, {"c": [None, 2]}], "d": "NaN", "e": None}


@pytest.mark.slow
def test_score_jsonl_writes_rescaled_scores_that_cannot_be_had_as_null(folder, tiny_checkpoint):
    # The tiny model does not tell a copy from an unrelated text: every rescaled score is NaN.
    output = folder / "segments.jsonl"
    argv = ["score", "-m", tiny_checkpoint, "-q", "-s", str(folder / "src.txt"), "-r", str(folder / "ref.txt")]
    argv += ["-t", str(folder / "sysA.txt"), "-f", "jsonl", "--rescale", "corpus", "-o", str(output)]
    with pytest.warns(UserWarning, match="cannot be rescaled"):
        assert main(argv) == 0
    rows = [strict_json(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(SYSTEM_A)
    assert all(row["faithfulness_rescaled"] is None and isinstance(row["faithfulness"], float) for row in rows)


def test_meta_eval_outputs_write_nan_as_null(tmp_path, monkeypatch):
    report = {"rows": [{"name": "m", "spearman": math.nan, "p": math.inf}]}
    prefix = tmp_path / "new" / "t"
    assert _outputs.write_json_and_csv(str(prefix), report, "csv\n") == (f"{prefix}.json", f"{prefix}.csv")
    written = strict_json((tmp_path / "new" / "t.json").read_text(encoding="utf-8"))
    assert written == {"rows": [{"name": "m", "spearman": None, "p": None}]}


# ---------------------------------------------------------------------------------------------------------------------
# -d: not empty, no empty item, no direction twice (the library's checks of directions, naming the flag or the item)


@pytest.mark.parametrize(
    "directions, message",
    [
        ("", "-d/--directions is empty"),
        (",", "directions[0] is ''"),
        ("faithfulness,,recall", "directions[1] is ''"),
        ("faithfulness,faithfulness", "directions[1] is 'faithfulness' again; give each direction once"),
        ("recall,precision,recall", "directions[2] is 'recall' again; give each direction once"),
    ],
)
@pytest.mark.parametrize("subcommand", ["score", "compare", "baseline", "meta-eval"])
def test_an_empty_or_repeated_direction_is_a_usage_error(folder, capsys, subcommand, directions, message):
    if subcommand in ("score", "compare"):
        argv = [subcommand, "-m", NO_MODEL, "-s", str(folder / "src.txt"), "-r", str(folder / "ref.txt")]
        argv += ["-t", str(folder / "sysA.txt"), str(folder / "sysB.txt")]
    elif subcommand == "baseline":
        argv = command("baseline", folder, str(folder / "b.json"))
    else:
        argv = command("meta-eval", folder, str(folder / "t"))
    assert main([*argv, "-d", directions]) == 2
    assert message in capsys.readouterr().err


def test_the_library_refuses_a_repeated_direction():
    with pytest.raises(ValueError, match=r"directions\[2\] is 'recall' again"):
        ScoringOptions(directions=["recall", "precision", "recall"])
    options = ScoringOptions(directions=["recall", "precision"])
    assert options.directions == ("precision", "recall")
