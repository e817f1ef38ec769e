"""How every subcommand ends: one function maps the error that ended a run to its exit status, by the error family,
and main says it once (bart_score.cli.exit_status, said_lines); and when the run is cut short from outside: Ctrl-C
(SIGINT) while scoring, a reader of stdout that goes away (`| head -1`), a stdout that cannot be written
(`> /dev/full`). Each is one line (or none, for the pipe) and a fixed exit status, never a traceback, and no partial
file is left under an output's name."""

import copy
import os
import pickle
import signal
import subprocess
import sys
import threading

import pytest
from support.meta_eval_fixtures import SUMMEVAL, write_fixture_files

from bart_score import errors
from bart_score.cli import exit_status, said_lines
from bart_score.cli._wording import Failed
from bart_score.messages import Mention

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = "the cat sat on a mat while the dog ran far from home on a good day".split()  # noqa: SIM905
SUBCOMMANDS = ("score", "compare", "baseline", "meta-eval")


@pytest.mark.parametrize(
    "error, status",
    [
        (errors.InputError("x"), 2),
        (errors.InputTypeError("x"), 2),
        (errors.UnsupportedModelError("x"), 2),
        (errors.CustomCodeError("x"), 2),
        (errors.BaselineNotFoundError("x"), 2),
        (errors.BaselineSettingsError("x"), 2),
        (errors.CacheFileError("x"), 2),
        (errors.CheckpointNotFoundError("x"), 1),
        (errors.CheckpointLoadError("x"), 1),
        (errors.MissingExtraError("x"), 1),
        (errors.BenchmarkDataError("x"), 1),
        (errors.OutputFileError("not a regular file", path="out"), 1),
        (errors.ScoringError("x"), 1),
        (PermissionError(13, "Permission denied"), 1),
        (KeyboardInterrupt(), 130),
        (BrokenPipeError(), 141),
        (Failed(errors.InputError("x"), "scoring failed"), 2),  # a failure's status is its error's
        (Failed(RuntimeError("CUDA out of memory"), "scoring failed"), 1),
        (Failed(Failed(errors.CheckpointNotFoundError("x")), quiet=True), 1),
    ],
)
def test_one_function_maps_the_error_that_ended_a_run_to_its_exit_status(error, status):
    assert exit_status(error) == status


@pytest.mark.parametrize(
    "error, lines",
    [
        (
            errors.InputError(Mention("max_length", 0), " is too short", option="max_length"),
            ["error: --max-length 0 is too short"],
        ),
        (Failed(RuntimeError("CUDA out of memory"), "scoring failed"), ["scoring failed: CUDA out of memory"]),
        (Failed(errors.InputError("a text has no sentence"), "scoring failed"), ["error: a text has no sentence"]),
        (
            Failed(OSError(28, "No space left on device"), "cannot write out.tsv", reason="No space left on device"),
            ["cannot write out.tsv: No space left on device"],
        ),
        (errors.CheckpointNotFoundError("Cannot load the checkpoint 'x'"), ["Cannot load the checkpoint 'x'"]),
        (Failed(KeyboardInterrupt(), "scoring failed", notes=["3 kept"]), ["interrupted", "3 kept"]),
        (Failed(errors.CheckpointNotFoundError("x"), quiet=True), []),  # said already, or by rank 0
        (BrokenPipeError(), []),
    ],
)
def test_main_says_the_error_that_ended_a_run_once_in_the_command_lines_words(error, lines):
    assert said_lines(error) == lines


def texts(count, length, offset):
    """`count` distinct texts (numbered: the engine scores identical pairs once, which would end a run at once)."""
    return [" ".join(WORDS[(i * 7 + j + offset) % len(WORDS)] for j in range(length)) + f" {i}" for i in range(count)]


@pytest.fixture(scope="module")
def checkpoint(tiny_checkpoint, copying_checkpoint):
    """The checkpoint for a subcommand: a baseline needs one that tells a copy from an unrelated text."""
    return lambda subcommand: copying_checkpoint if subcommand == "baseline" else tiny_checkpoint


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-exits")
    for lines, name in [(3, "few"), (3000, "many")]:
        for role, length in [("src", 40), ("a", 20), ("b", 25)]:
            (folder / f"{name}-{role}.txt").write_text("\n".join(texts(lines, length, len(role))) + "\n")
    write_fixture_files(folder)
    with open(folder / "summeval-many.pkl", "wb") as handle:
        pickle.dump(many_documents(1500), handle)
    return folder


def many_documents(count):
    """A SummEval-like file of `count` documents, long enough to be still scoring when interrupted."""
    template = next(iter(SUMMEVAL.values()))
    documents = {}
    for index, source in enumerate(texts(count, 40, 0)):
        document = copy.deepcopy(template)
        document["src"] = f"{source} {index}"
        documents[f"dm-test-{index}"] = document
    return documents


def command(subcommand, folder, checkpoint, size, output):
    """The subcommand's words on `size` ("few" or "many") segments, writing its file (if any) under `output`."""
    src, a, b = (str(folder / f"{size}-{role}.txt") for role in ("src", "a", "b"))
    words = {
        "score": ["-s", src, "-t", a, b, *(["-o", output] if output else [])],
        "compare": ["-s", src, "-t", a, b, "--resamples", "50"],
        "baseline": ["--corpus", src, "--pairs", "6" if size == "few" else "20000", "-o", output or f"{src}.json"],
        "meta-eval": [
            "-b",
            "summeval",
            "--data",
            f"summeval={folder / ('summeval.pkl' if size == 'few' else 'summeval-many.pkl')}",
            "-o",
            output or str(folder / "table"),
            "--cache",
            str(folder / f"cache-{size}-{os.path.basename(output or 'stdout')}"),
        ],
    }[subcommand]
    quiet = ["-q"] if size == "few" else []  # "many" shows the progress bar that says scoring has begun
    return [sys.executable, os.path.join(ROOT, "bartscore.py"), subcommand, "-m", checkpoint, *words, *quiet]


def interruptible():
    """Run in the child before exec: Ctrl-C reaches it as it reaches a command typed at a terminal. A test run started
    in the background by a non-interactive shell inherits SIGINT ignored, and Python then installs no handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def environment():
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


@pytest.mark.slow
@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_ctrl_c_while_scoring_is_one_line_exit_130_and_no_partial_file(subcommand, folder, checkpoint, tmp_path):
    output = str(tmp_path / "out")
    process = subprocess.Popen(
        command(subcommand, folder, checkpoint(subcommand), "many", output),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        preexec_fn=interruptible,
    )
    lines = []
    scoring = threading.Event()

    def read_stderr():
        for line in iter(lambda: process.stderr.readline(), ""):
            lines.append(line)
            if "BARTScore:" in line:  # the progress bar: the model is loaded and scoring has begun
                scoring.set()
        scoring.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert scoring.wait(300), "no progress bar within 300 s"
    assert process.poll() is None, "".join(lines)  # still scoring when interrupted
    process.send_signal(signal.SIGINT)
    code = process.wait(120)
    reader.join(10)
    stderr = "".join(lines)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert f"bartscore {subcommand}: interrupted" in stderr
    left = sorted(os.listdir(tmp_path))
    assert not [name for name in left if name.startswith(("out", ".out"))], left


@pytest.mark.slow
@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_a_reader_that_goes_away_ends_the_run_quietly(subcommand, folder, checkpoint, tmp_path):
    # The pipe's reading end is closed before anything is written: every write to stdout then fails with EPIPE.
    reading, writing = os.pipe()
    os.close(reading)
    completed = subprocess.run(
        command(subcommand, folder, checkpoint(subcommand), "few", str(tmp_path / "out")),
        stdout=writing,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        timeout=600,
    )
    os.close(writing)
    assert completed.returncode == 141, completed.stderr
    for said in ("Traceback", "Exception ignored", "BrokenPipe", "error"):
        assert said not in completed.stderr, completed.stderr


@pytest.mark.slow
def test_head_1_takes_the_first_line_and_nothing_is_printed_about_the_pipe(folder, tiny_checkpoint):
    scoring = subprocess.Popen(
        command("score", folder, tiny_checkpoint, "few", None),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
    )
    head = subprocess.run(["head", "-1"], stdin=scoring.stdout, capture_output=True, text=True, timeout=600)
    scoring.stdout.close()
    code = scoring.wait(600)
    stderr = scoring.stderr.read().decode()
    assert head.stdout.startswith("system\tsegment\t")
    assert code in (0, 141) and "Traceback" not in stderr and "Exception ignored" not in stderr, stderr


@pytest.mark.slow
@pytest.mark.parametrize("subcommand", SUBCOMMANDS)
def test_a_full_disk_on_stdout_is_one_line_naming_stdout(subcommand, folder, checkpoint, tmp_path):
    with open("/dev/full", "w") as full:
        completed = subprocess.run(
            command(subcommand, folder, checkpoint(subcommand), "few", str(tmp_path / "out")),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(),
            timeout=600,
        )
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.strip().splitlines()[-1] == (
        f"bartscore {subcommand}: cannot write the output to stdout: No space left on device"
    )
    assert "Traceback" not in completed.stderr and "Exception ignored" not in completed.stderr


@pytest.mark.slow
def test_help_into_a_closed_pipe_or_a_full_disk(tmp_path):
    reading, writing = os.pipe()
    os.close(reading)
    closed = subprocess.run(
        [sys.executable, "-m", "bart_score", "--help"], stdout=writing, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    os.close(writing)
    assert closed.returncode in (0, 141) and closed.stderr == ""  # argparse itself drops a help it cannot write
    with open("/dev/full", "w") as full:
        failed = subprocess.run(
            [sys.executable, "-m", "bart_score", "score", "--help"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert failed.returncode == 1
    assert failed.stderr == "bartscore: cannot write the output to stdout: No space left on device\n"
