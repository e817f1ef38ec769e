"""The command line on a tiny checkpoint. What its commands compute and write runs through bart_score.main in the test's
process (conftest.py's `in_process`), as run_cli runs it in a process of its own, sparing each run the command's
imports (about 6 s of CPU time); its process boundary (exit statuses, one clear line and no traceback, warnings as
lines, the installed command) runs as users run it, in subprocesses."""

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from support.cli import REFERENCES_1, REFERENCES_2, ROOT, SOURCES, SYSTEM_A, SYSTEM_B, run_cli, tsv_scores

import bart_score


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, lines in [
        ("src.txt", SOURCES),
        ("ref1.txt", REFERENCES_1),
        ("ref2.txt", REFERENCES_2),
        ("sysA.txt", SYSTEM_A),
        ("sysB.txt", SYSTEM_B),
    ]:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths[name] = str(path)
    return paths


@pytest.mark.slow
def test_plain_text_files_give_the_scores_of_compute(in_process, files, scorer, tiny_checkpoint):
    code, stdout, stderr = in_process(
        "score",
        "-m",
        tiny_checkpoint,
        "-s",
        files["src.txt"],
        "-r",
        files["ref1.txt"],
        files["ref2.txt"],
        "-t",
        files["sysA.txt"],
        files["sysB.txt"],
        "-q",
    )
    assert code == 0, stderr
    header, rows = tsv_scores(stdout)
    assert header == ["system", "segment", *bart_score.DIRECTIONS]
    references = [list(pair) for pair in zip(REFERENCES_1, REFERENCES_2)]
    for system, hypotheses in (("sysA.txt", SYSTEM_A), ("sysB.txt", SYSTEM_B)):
        expected = scorer.score_directions(hypotheses, references=references, sources=SOURCES)
        got = [row for row in rows if row["system"] == system]
        assert [int(row["segment"]) for row in got] == [1, 2, 3]
        for direction in bart_score.DIRECTIONS:
            assert np.allclose([float(row[direction]) for row in got], expected[direction], atol=1e-5)
        mean_line = next(line for line in stderr.splitlines() if line.startswith(system))
        assert float(mean_line.split()[1]) == pytest.approx(expected["faithfulness_mean"], abs=1e-4)
    assert f"signature: ckpt:{tiny_checkpoint}|dirs:faithfulness+precision+recall+f_score|agg:mean|nrefs:2|" in stderr


@pytest.mark.slow
def test_jsonl_input_with_varying_reference_counts_and_options(in_process, tmp_path, scorer, tiny_checkpoint):
    rows = [
        {"source": s, "references": refs, "alpha": a, "beta": b}
        for s, refs, a, b in zip(SOURCES, [["x"], ["y", "z"], ["u", "v", "w"]], SYSTEM_A, SYSTEM_B)
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "segments.jsonl"
    code, stdout, stderr = in_process(
        "score",
        "-m",
        tiny_checkpoint,
        "-i",
        str(path),
        "-d",
        "faithfulness,recall",
        "--aggregation",
        "max",
        "-p",
        "mt",
        "--prompt-side",
        "decoder",
        "-f",
        "jsonl",
        "-o",
        str(out),
        "-q",
    )
    assert code == 0, stderr
    segments = [json.loads(line) for line in out.read_text().splitlines()]
    expected = scorer.score_directions(
        SYSTEM_B,
        references=[r["references"] for r in rows],
        sources=SOURCES,
        directions=["faithfulness", "recall"],
        aggregation="max",
        prompt="mt",
        prompt_side="decoder",
    )
    beta = [s for s in segments if s["system"] == "beta"]
    assert set(beta[0]) == {"system", "segment", "faithfulness", "recall"}
    assert np.allclose([s["recall"] for s in beta], expected["recall"], atol=1e-5)
    assert np.allclose([s["faithfulness"] for s in beta], expected["faithfulness"], atol=1e-5)
    assert "prompt:mt(1)@decoder" in stdout and stdout.splitlines()[0].split() == ["system", "faithfulness", "recall"]


@pytest.mark.slow
def test_csv_input_with_reference_columns(in_process, tmp_path, scorer, tiny_checkpoint):
    path = tmp_path / "data.csv"
    lines = ["source,reference_1,reference_2,mine"] + [
        f'"{s}","{r1}","{r2}","{h}"' for s, r1, r2, h in zip(SOURCES, REFERENCES_1, ["", "Another.", ""], SYSTEM_A)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, stdout, stderr = in_process("score", "-m", tiny_checkpoint, "-i", str(path), "-d", "precision", "-q")
    assert code == 0, stderr
    _, rows = tsv_scores(stdout)
    expected = scorer.score_directions(
        SYSTEM_A,
        references=[["This is fun."], ["A cat sat on a mat.", "Another."], ["I am happy."]],
        directions="precision",
    )
    assert np.allclose([float(r["precision"]) for r in rows], expected["precision"], atol=1e-5)


@pytest.mark.slow
def test_a_csv_row_of_empty_cells_is_scored_as_a_segment_of_empty_texts(in_process, tmp_path, scorer, tiny_checkpoint):
    path = tmp_path / "emptyrow.csv"
    path.write_text("source,hyp\n,\nthe cat,a cat\n\n", encoding="utf-8")  # a blank line at the end is no row
    code, stdout, stderr = in_process("score", "-m", tiny_checkpoint, "-i", str(path), "-q")
    assert code == 0, stderr
    _, rows = tsv_scores(stdout)
    assert [row["segment"] for row in rows] == ["1", "2"]
    expected = scorer.score_directions(["", "a cat"], sources=["", "the cat"])
    assert np.allclose([float(row["faithfulness"]) for row in rows], expected["faithfulness"], atol=1e-5)


def test_a_csv_cell_longer_than_the_csv_modules_field_limit_is_read(tmp_path):
    import csv

    path = tmp_path / "big.csv"
    path.write_text(f'source,hyp\n"{"x" * 300_000}",{"y" * 200_000}\n', encoding="utf-8")
    before = csv.field_size_limit()
    corpus = bart_score.read_table_corpus(str(path))  # no limit on lengths: the command line's reading
    assert (len(corpus.sources[0]), len(corpus.systems["hyp"][0])) == (300_000, 200_000)
    assert csv.field_size_limit() == before  # the process-wide setting is put back


ROLES = '{"source": "s", "id": "x", "reference": "r", "hyp": "h"}\n'


@pytest.mark.parametrize(
    "content, columns, message",
    [
        # Every pair of roles that a default (the columns named source, id, reference) can take part in.
        (ROLES, ["--system-columns", "source"], "column 'source' is the source and cannot also be a system"),
        (ROLES, ["--reference-columns", "source"], "column 'source' is the source and cannot also be a reference"),
        (ROLES, ["--source-column", "id"], "column 'id' is the source and cannot also be the id column"),
        (ROLES, ["--system-columns", "id"], "column 'id' is the id column and cannot also be a system"),
        (ROLES, ["--reference-columns", "id"], "column 'id' is the id column and cannot also be a reference"),
        (ROLES, ["--system-columns", "hyp", "id"], "column 'id' is the id column and cannot also be a system"),
        ('{"source":"a","hyp":"b","hyp":"c"}\n', [], "t.jsonl line 1: key 'hyp' appears twice"),
        ('{"source":"a","hyp":"b"}\n\n{"source":"a","source":"a","hyp":"c"}\n', [], "t.jsonl line 3: key 'source'"),
        ('{"source":"a","hyp":"b","x":{"k":1,"k":2}}\n', [], "t.jsonl line 1: key 'k' appears twice"),
        (
            '{"id":{"x":1},"source":"a","hyp":"b"}\n',
            [],
            "t.jsonl row 1, column 'id': an id is text or a number, got a dict",
        ),
        ('{"id":1,"source":"a","hyp":"b"}\n{"id":true,"source":"a","hyp":"b"}\n', [], "row 2, column 'id': an id is"),
        (
            '{"id":[1],"source":"a","hyp":"b"}\n',
            [],
            "t.jsonl row 1, column 'id': an id is text or a number, got a list",
        ),
    ],
)
def test_table_errors_exit_2_before_the_model_loads(tmp_path, capsys, content, columns, message):
    path = tmp_path / "t.jsonl"
    path.write_text(content, encoding="utf-8")
    for command in ("score", "compare", "baseline"):
        table = ["-i", str(path)] if command != "baseline" else ["--corpus", str(path), "-o", str(tmp_path / "b.json")]
        code = bart_score.main([command, "-m", str(tmp_path / "no-such-model"), "-q", *table, *columns])
        stderr = capsys.readouterr().err
        assert code == 2, (command, stderr)
        assert message in stderr, (command, stderr)


def test_explicit_roles_can_use_the_columns_the_defaults_would(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(ROLES, encoding="utf-8")
    corpus = bart_score.read_table_corpus(str(path), source_column="hyp", system_columns=["source"])
    assert (corpus.sources, corpus.systems, corpus.ids) == (["h"], {"source": ["s"]}, ["x"])
    corpus = bart_score.read_table_corpus(str(path), source_column="reference")  # no longer a reference column
    assert (corpus.sources, corpus.references, corpus.systems) == (["r"], None, {"source": ["s"], "hyp": ["h"]})


@pytest.mark.slow
def test_compare_finds_the_system_better_on_every_segment(in_process, tmp_path, scorer, tiny_checkpoint):
    # Per segment, give system "better" whichever of two candidates the model scores higher: better everywhere.
    candidates = [(a, b) for a, b in zip(SYSTEM_A * 4, SYSTEM_B * 4)]
    sources = SOURCES * 4
    first = scorer.score(sources, [a for a, _ in candidates])
    second = scorer.score(sources, [b for _, b in candidates])
    better = [a if x > y else b for (a, b), x, y in zip(candidates, first, second)]
    worse = [b if x > y else a for (a, b), x, y in zip(candidates, first, second)]
    for name, lines in (("src.txt", sources), ("better", better), ("worse", worse)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, stdout, stderr = in_process(
        "compare",
        "-m",
        tiny_checkpoint,
        "-s",
        str(tmp_path / "src.txt"),
        "-t",
        str(tmp_path / "worse"),
        str(tmp_path / "better"),
        "--json",
        "-q",
    )
    assert code == 0, stderr
    report = json.loads(stdout)
    (pair,) = report["directions"]["faithfulness"]["pairs"]
    assert pair["winner"] == "better" and pair["bootstrap_p"] < 0.05 and pair["t_test_p"] < 0.05
    assert report["signature"].startswith(f"ckpt:{tiny_checkpoint}|dirs:faithfulness|")


@pytest.mark.slow
def test_compare_identical_systems_is_a_tie(in_process, files, tiny_checkpoint, tmp_path):
    copy = tmp_path / "sysA-copy.txt"
    shutil.copyfile(files["sysA.txt"], copy)
    code, stdout, stderr = in_process(
        "compare", "-m", tiny_checkpoint, "-r", files["ref1.txt"], "-t", files["sysA.txt"], str(copy), "-q"
    )
    assert code == 0, stderr
    assert "== f_score:" in stdout and "tie" in stdout
    pair_line = next(line for line in stdout.splitlines() if "sysA.txt" in line and "sysA-copy.txt" in line)
    assert "+0.0000" in pair_line and "1.0000" in pair_line


@pytest.mark.parametrize(
    "args,message",
    [
        (["-s", "{src}", "-t", "{short}"], r"short.txt has 1 line but .*src.txt has 3"),
        (["-s", "{src}", "-t", "{missing}"], r"cannot read .*missing.txt"),
        (["-t", "{sysA}"], r"give --sources and/or --references"),
        (["-s", "{src}"], r"-t/--hypotheses must name at least one file \(one per system\)"),
        (["-s", "{src}", "-t", "{sysA}", "-d", "recall"], r"-d/--directions: direction 'recall' needs -r/--references"),
        (["-s", "{src}", "-t", "{sysA}", "-p", "sumary"], r"--prompt sumary is not a prompt set"),
        (
            ["-s", "{src}", "-t", "{sysA}", "--aggregation", "median"],
            r"argument --aggregation: invalid choice: 'median'",
        ),
        (["-s", "{src}", "-t", "{sysA}", "-p", "summary", "--prompt-phrases", "x"], r"not allowed with argument -p"),
        (["-s", "{src}", "-t", "{sysA}", "--device", "gpu0"], r"--device\b.*gpu0.* is not a device"),
        (["-s", "{src}", "-t", "{sysA}", "-o", "{nowhere}"], r"cannot write -o .*out.tsv: .*nowhere does not exist"),
        (["-s", "{empty}", "-t", "{empty}"], r"empty.txt is empty: no segments to score"),
        (["-s", "{src}", "-r", "{blank_ref}", "-t", "{sysA}"], r"segment 2 has no reference: line 2 is blank in"),
        (["-i", "{table}", "--source-column", "artcle"], r"table.csv has no column 'artcle'"),
        (
            ["-i", "{table}", "--reference-columns", "sys", "--system-columns", "sys"],
            r"column 'sys' is given two roles",
        ),
        (["-s", "{src}", "-t", "{sysA}", "--batch-size", "0"], r"--batch-size\b.* must be a positive integer"),
        (["-s", "{src}", "-t", "{sysA}", "--max-length", "5000"], r"--max-length must be an integer from 2 to 1024"),
        (["-s", "{src}", "-t", "{latin1}"], r"latin1.txt is not UTF-8 text"),
        (["-i", "{bad}"], r"bad.jsonl line 2 is not valid JSON"),
        (["-i", "{src}"], r"a table must be a .jsonl or .csv file"),
        (["-i", "{bad}", "-s", "{src}"], r"give either --input or plain-text files"),
        (["--unknown-flag"], r"unrecognized arguments"),
        (["-i", "{ragged}"], r"ragged.csv line 3 has 2 fields but the header has 3"),
        (["-i", "{dupes}"], r"column names appear more than once: sys"),
        (["-i", "{norefs}"], r"norefs.jsonl row 2 has no reference"),
        (["-i", "{nosource}"], r"nosource.jsonl row 1, column 'source': expected text, got nothing"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(files, tmp_path, tiny_checkpoint, capsys, args, message):
    # In-process for speed (the subprocess tests above cover the process boundary); same main() as the command.
    (tmp_path / "short.txt").write_text("only one line\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\nb\nc\n".encode("latin-1"))
    (tmp_path / "bad.jsonl").write_text('{"source": "a", "sys": "b"}\n{not json}\n', encoding="utf-8")
    (tmp_path / "ragged.csv").write_text("source,reference,sys\na,b,c\nd,e\n", encoding="utf-8")
    (tmp_path / "dupes.csv").write_text("source, sys,sys\na,b,c\n", encoding="utf-8")
    (tmp_path / "norefs.jsonl").write_text(
        '{"reference": "r", "sys": "x"}\n{"reference": " ", "sys": "y"}\n', encoding="utf-8"
    )
    (tmp_path / "nosource.jsonl").write_text('{"sys": "x"}\n{"source": "s", "sys": "y"}\n', encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "blank_ref.txt").write_text("r\n \nr\n", encoding="utf-8")
    (tmp_path / "table.csv").write_text("article,reference,sys\na,b,c\n", encoding="utf-8")
    paths = {
        "src": files["src.txt"],
        "sysA": files["sysA.txt"],
        "short": str(tmp_path / "short.txt"),
        "empty": str(tmp_path / "empty.txt"),
        "blank_ref": str(tmp_path / "blank_ref.txt"),
        "table": str(tmp_path / "table.csv"),
        "nowhere": str(tmp_path / "nowhere" / "out.tsv"),
        "missing": str(tmp_path / "missing.txt"),
        "latin1": str(tmp_path / "latin1.txt"),
        "bad": str(tmp_path / "bad.jsonl"),
        **{
            name: str(tmp_path / f"{name}.{ext}")
            for name, ext in (("ragged", "csv"), ("dupes", "csv"), ("norefs", "jsonl"), ("nosource", "jsonl"))
        },
    }
    try:
        code = bart_score.main(["score", "-m", tiny_checkpoint, "-q", *[a.format(**paths) for a in args]])
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    stderr = capsys.readouterr().err
    assert code == 2
    assert re.search(message, stderr), stderr


def test_compare_refuses_a_negative_seed(files, tiny_checkpoint, capsys):
    code = bart_score.main(
        [
            "compare",
            "-m",
            tiny_checkpoint,
            "-s",
            files["src.txt"],
            "-t",
            files["sysA.txt"],
            files["sysB.txt"],
            "--seed",
            "-1",
        ]
    )
    assert code == 2 and "--seed at least 0" in capsys.readouterr().err


@pytest.mark.slow
def test_blank_reference_lines_are_skipped_and_reported_as_a_csv_reads_empty_cells(
    in_process, files, tmp_path, tiny_checkpoint
):
    (tmp_path / "ref2.txt").write_text("It is fun.\n\nToday I feel good.\n", encoding="utf-8")
    code, stdout, stderr = in_process(
        "score",
        "-m",
        tiny_checkpoint,
        "-s",
        files["src.txt"],
        "-r",
        files["ref1.txt"],
        str(tmp_path / "ref2.txt"),
        "-t",
        files["sysA.txt"],
        "-q",
    )
    assert code == 0, stderr
    assert "note: 1 blank reference line(s) or cell(s) are not references and were skipped" in stderr
    table = tmp_path / "data.csv"
    table.write_text(
        "source,reference_1,reference_2,sysA.txt\n"
        + "".join(
            f'"{s}","{r1}","{r2}","{h}"\n'
            for s, r1, r2, h in zip(SOURCES, REFERENCES_1, ["It is fun.", "", "Today I feel good."], SYSTEM_A)
        ),
        encoding="utf-8",
    )
    code, from_table, table_stderr = in_process("score", "-m", tiny_checkpoint, "-i", str(table), "-q")
    assert code == 0, table_stderr
    assert from_table == stdout and "nrefs:1-2" in stderr and "note: 1 blank reference" in table_stderr


@pytest.mark.slow
def test_warnings_are_one_plain_line_each(files, tiny_checkpoint):
    code, _, stderr = run_cli(
        "score", "-m", tiny_checkpoint, "-s", files["src.txt"], "-t", files["sysA.txt"], "--max-length", "4", "-q"
    )
    assert code == 0, stderr
    (line,) = [line for line in stderr.splitlines() if "truncated" in line]
    assert line.startswith("bartscore score: warning: BARTScore truncated 3 distinct source text(s)")
    assert "warnings.warn" not in stderr and "UserWarning" not in stderr and ".py:" not in stderr


@pytest.mark.slow
def test_one_word_prompt_phrases_and_ids_in_the_output(in_process, tmp_path, scorer, tiny_checkpoint):
    path = tmp_path / "data.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"doc-{i}", "source": s, "sys": h}) + "\n"
            for i, (s, h) in enumerate(zip(SOURCES, SYSTEM_A))
        ),
        encoding="utf-8",
    )
    code, stdout, stderr = in_process(
        "score", "-m", tiny_checkpoint, "-i", str(path), "--prompt-phrases", "summarize", "briefly", "-q"
    )
    assert code == 0, stderr
    header, rows = tsv_scores(stdout)
    assert header == ["system", "segment", "id", "faithfulness"]
    assert [row["id"] for row in rows] == ["doc-0", "doc-1", "doc-2"]
    expected = scorer.score_directions(SYSTEM_A, sources=SOURCES, prompt=["summarize", "briefly"])
    assert np.allclose([float(row["faithfulness"]) for row in rows], expected["faithfulness"], atol=1e-5)


@pytest.mark.slow
def test_compare_json_writes_null_for_undefined_p_values(in_process, tmp_path, tiny_checkpoint):
    for name, line in (("src.txt", "One source."), ("a.txt", "One output."), ("b.txt", "Another output.")):
        (tmp_path / name).write_text(line + "\n", encoding="utf-8")
    code, stdout, stderr = in_process(
        "compare",
        "-m",
        tiny_checkpoint,
        "-s",
        str(tmp_path / "src.txt"),
        "-t",
        str(tmp_path / "a.txt"),
        str(tmp_path / "b.txt"),
        "--json",
        "-q",
    )
    assert code == 0, stderr
    report = json.loads(stdout, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    (pair,) = report["directions"]["faithfulness"]["pairs"]
    assert report["segments"] == 1 and pair["bootstrap_p"] is None and pair["t_test_p"] is None
    assert pair["winner"] is None


@pytest.mark.slow
def test_compare_needs_two_systems_and_exits_2_from_the_process(files, tiny_checkpoint):
    code, _, stderr = run_cli("compare", "-m", tiny_checkpoint, "-s", files["src.txt"], "-t", files["sysA.txt"])
    assert code == 2 and "compare needs two or more systems" in stderr and "Traceback" not in stderr


@pytest.mark.slow
def test_missing_checkpoint_is_a_runtime_failure_with_one_clear_line(files, tmp_path):
    code, _, stderr = run_cli(
        "score",
        "-m",
        "vanilla",
        "-s",
        files["src.txt"],
        "-t",
        files["sysA.txt"],
        env={"HF_HUB_CACHE": str(tmp_path / "empty-hf-cache")},
    )
    assert code == 1
    assert "Traceback" not in stderr and "Cannot load the checkpoint 'facebook/bart-large'" in stderr


@pytest.mark.slow
def test_pip_install_gives_the_bartscore_command(tmp_path, files, tiny_checkpoint):
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, which must stay clean.
    sources = tmp_path / "sources"
    shutil.copytree(
        ROOT, sources, ignore=shutil.ignore_patterns(".*", "__pycache__", "build", "*.egg-info", "artifacts")
    )
    wheel_dir = tmp_path / "wheel"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheel_dir),
            sources,
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheel_dir.glob("bartscore-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "bartscore.py" in names and "bart_score/scoring/engine.py" in names and "bart_score/cli/score.py" in names
    assert not [name for name in names if name == "app.py" or name.startswith("space/")]  # the Space is no library
    assert "bartscore = bart_score.cli:main" in entry_points
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    command = subprocess.run(
        [
            str(target / "bin" / "bartscore"),
            "score",
            "-m",
            tiny_checkpoint,
            "-s",
            files["src.txt"],
            "-t",
            files["sysA.txt"],
            "-q",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1"},
    )
    assert command.returncode == 0, command.stderr
    assert command.stdout.startswith("system\tsegment\tfaithfulness")


def test_version_is_one_number():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        assert f'version = "{bart_score.__version__}"' in handle.read()


@pytest.fixture(scope="module")
def chat_checkpoint(tmp_path_factory):
    from support.models import build_tiny_chat

    return build_tiny_chat("qwen2", "chatml", tmp_path_factory.mktemp("chat-qwen2"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags, message",
    [
        (["--instruction", "Summarize: {condition}"], "--instruction is for chat scoring, which is not asked for"),
        (["--system", "You judge."], "--system is for chat scoring, which is not asked for"),
        (["--chat", "--template", "{condition}\nTL;DR:"], "--template does not go with chat scoring"),
        (["--chat", "--compatibility", "gptscore"], "--compatibility gptscore does not go with chat scoring"),
        (["--chat", "--instruction", "Summarize."], "--instruction must hold the field {condition} once"),
        (["--chat", "--instruction", "{condition} {condition}"], "--instruction must hold the field {condition} once"),
        (
            ["--chat", "--system", "Be brief.\u2063bartscore-condition\u2063"],
            "--system holds '\\u2063bartscore-condition\\u2063' at character 9, the text chat scoring puts in the "
            "condition's place",
        ),
    ],
)
def test_chat_flags_that_cannot_work_are_usage_errors_before_the_model_loads(files, flags, message):
    code, _, stderr = run_cli("score", "-m", "/no/such/model", "-s", files["src.txt"], "-t", files["sysA.txt"], *flags)
    assert code == 2
    assert message in stderr and "Traceback" not in stderr


@pytest.mark.slow
def test_chat_scoring_from_the_command_line_equals_the_library_and_shows_pairs_per_second(files, chat_checkpoint):
    instruction = "Summarize this text.\n\n{condition}"
    code, stdout, stderr = run_cli(
        "score",
        "-m",
        chat_checkpoint,
        "--chat",
        "--instruction",
        instruction,
        "--system",
        "You judge summaries.",
        "-s",
        files["src.txt"],
        "-r",
        files["ref1.txt"],
        "-t",
        files["sysA.txt"],
    )
    assert code == 0, stderr
    scorer = bart_score.BARTScorer(
        checkpoint=chat_checkpoint, device="cpu", chat=True, instruction=instruction, system="You judge summaries."
    )
    expected = scorer.score_directions(SYSTEM_A, references=REFERENCES_1, sources=SOURCES)
    _, rows = tsv_scores(stdout)
    for direction in bart_score.DIRECTIONS:
        assert np.allclose([float(row[direction]) for row in rows], expected[direction], atol=1e-5)
    assert f"policy:{scorer.token_policy}" in stderr and scorer.token_policy.startswith("chat:")
    assert re.search(r"\d+/\d+ \[[^\]]* pairs/s\]", stderr)  # the bar, with its rate
