"""`bartscore convert` and convert_gguf: a GGUF file written as a plain transformers folder that scores exactly as the
file (plain and chat scoring, tiny models written here and the real SmolLM2 file), with its chat template (the file's
or one beside it); a folder that is not one of convert's outputs alone, as it wrote them, is never written into or
removed (whatever its marker says, and whenever a file comes into it); an interrupted conversion (an error, Ctrl-C,
SIGTERM, a full disk, a file over the size limit) leaves nothing under the folder's name or beside it, and one killed
outright is swept by the next."""

import contextlib
import copy
import hashlib
import json
import os
import pathlib
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from support.extras import require_extra
from support.fast_subset import fast_cases

require_extra("gguf")  # before the imports that need it
import torch
import transformers
from support.gguf import CHAT_TEMPLATE, build_tiny_causal, write_gguf

import bart_score
from bart_score.cli import main
from bart_score.errors import BARTScoreWarning, CheckpointLoadError, InputError, OutputFileError
from bart_score.models import conversion
from bart_score.models.conversion import CONVERTED_MARKER, convert_gguf

CONDITIONS = ["The cat sat on the mat all afternoon.", "Rain is expected in the north tomorrow, the service said."]
TARGETS = ["A cat sat on a mat.", "It will rain in the north."]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"}
# Who owns a temporary folder beside the folder, as the conversion names it: a digest of this machine's name.
HOST = hashlib.sha256(socket.gethostname().encode("utf-8")).hexdigest()[:8]


# Over this, a file is known by its size and time of change rather than its bytes: the sparse marker of a GiB, read
# twice, cost the fast subset about 4 s of CPU time.
READ_WHOLE_BYTES = 1 << 20


def tree(folder):
    """Everything under `folder`, by relative path: a file's bytes (over READ_WHOLE_BYTES, its size and time of
    change), a link's target, "folder" for a folder."""
    found = {}
    for place, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(place, name)
            relative = os.path.relpath(path, folder)
            if os.path.islink(path):
                found[relative] = f"link to {os.readlink(path)}"
            elif os.path.isdir(path):
                found[relative] = "folder"
            elif (facts := os.stat(path)).st_size > READ_WHOLE_BYTES:
                found[relative] = (facts.st_size, facts.st_mtime_ns)
            else:
                found[relative] = pathlib.Path(path).read_bytes()
    return found


def dead_pid():
    """A process id that no process has: the kernel's pid_max itself (ids stop below it)."""
    return int(pathlib.Path("/proc/sys/kernel/pid_max").read_text())


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    model, tokenizer = build_tiny_causal("qwen2", seed=7)
    return write_gguf(model, tokenizer, tmp_path_factory.mktemp("convert") / "tiny.gguf")


@pytest.fixture(scope="module")
def converted(tiny_gguf, tmp_path_factory):
    folder = tmp_path_factory.mktemp("converted") / "tiny"
    written = convert_gguf(tiny_gguf, str(folder))
    return str(folder), written


@pytest.mark.slow
def test_the_folder_scores_exactly_as_the_gguf_file(tiny_gguf, converted):
    folder, written = converted
    assert FOLDER_FILES | {CONVERTED_MARKER} <= set(written) == set(os.listdir(folder))
    for options in ({}, {"chat": True}):
        from_gguf = bart_score.BARTScorer(checkpoint=tiny_gguf, device="cpu", **options)
        from_folder = bart_score.BARTScorer(checkpoint=folder, device="cpu", **options)
        assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS), options
        assert from_folder.token_policy == from_gguf.token_policy
    mask = os.umask(0)
    os.umask(mask)
    assert {os.stat(os.path.join(folder, name)).st_mode & 0o777 for name in written} == {0o666 & ~mask}
    config = json.loads(pathlib.Path(folder, "config.json").read_text(encoding="utf-8"))
    assert "quantization_config" not in config
    marker = json.loads(pathlib.Path(folder, CONVERTED_MARKER).read_text(encoding="utf-8"))
    assert marker["source"] == os.path.realpath(tiny_gguf) and marker["chat_template"] == "GGUF metadata"


@pytest.mark.slow
def test_the_folder_is_a_plain_checkpoint_transformers_reads_alone(converted, tiny_gguf):
    folder, _ = converted
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=False)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    assert getattr(model.config, "quantization_config", None) is None
    assert {parameter.dtype for parameter in model.parameters()} == {torch.float32}
    assert tokenizer.chat_template == CHAT_TEMPLATE


@pytest.mark.slow
def test_a_chat_template_beside_a_base_models_file_goes_into_the_folder(tmp_path):
    model, tokenizer = build_tiny_causal("llama", seed=8)
    base = copy.deepcopy(tokenizer)
    base.chat_template = None
    (tmp_path / "base").mkdir()
    gguf = write_gguf(model, base, tmp_path / "base" / "model.gguf")
    (tmp_path / "base" / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    convert_gguf(gguf, str(tmp_path / "out"))
    assert (tmp_path / "out" / "chat_template.jinja").read_text(encoding="utf-8") == CHAT_TEMPLATE
    assert json.loads((tmp_path / "out" / CONVERTED_MARKER).read_text())["chat_template"] == "chat_template.jinja"
    from_gguf = bart_score.BARTScorer(checkpoint=gguf, device="cpu", chat=True)
    from_folder = bart_score.BARTScorer(checkpoint=str(tmp_path / "out"), device="cpu", chat=True)
    assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS)


def test_a_folder_that_is_not_a_conversion_is_never_written_into(tiny_gguf, tmp_path, no_model_load):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds 1 file\(s\) that a conversion did not write") as raised:
        convert_gguf(tiny_gguf, str(mine))
    assert raised.value.option == "folder"
    assert os.listdir(mine) == ["notes.txt"] and os.listdir(tmp_path) == ["mine"]
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match=r"is not a folder"):
        convert_gguf(tiny_gguf, str(a_file))
    with pytest.raises(InputError, match=r"is not a GGUF file") as raised:
        convert_gguf(str(a_file), str(tmp_path / "out"))
    assert raised.value.option == "gguf"
    not_gguf = tmp_path / "fake.gguf"
    not_gguf.write_bytes(b"not gguf at all")
    with pytest.raises(CheckpointLoadError, match=r"is not a GGUF file \(it does not start with the GGUF magic"):
        convert_gguf(str(not_gguf), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_empty_folder_or_an_earlier_conversion_is_replaced(tiny_gguf, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    convert_gguf(tiny_gguf, str(empty))
    assert set(os.listdir(empty)) >= FOLDER_FILES
    first = tree(empty)
    marker = json.loads((empty / CONVERTED_MARKER).read_text(encoding="utf-8"))
    listed = {name: (entry["size"], entry["sha256"]) for name, entry in marker["files"].items()}
    assert listed == {
        name: (len(data), hashlib.sha256(data).hexdigest()) for name, data in first.items() if name != CONVERTED_MARKER
    }
    (empty / "config.json").touch()  # touched, its bytes the same: still the conversion's own
    convert_gguf(tiny_gguf, str(empty))
    assert tree(empty) == first
    assert sorted(os.listdir(tmp_path)) == ["empty"]  # nothing left beside it


@pytest.mark.parametrize(
    "stop",
    [KeyboardInterrupt, pytest.param(OSError(28, "No space left on device"), marks=pytest.mark.slow)],
    ids=["ctrl-c", "disk"],
)
def test_an_interrupted_conversion_leaves_nothing_under_the_folders_name(tiny_gguf, tmp_path, monkeypatch, stop):
    """Stopped while the tokenizer is written, after the weights: the folder is not there, nor anything beside it."""
    seen = []

    def interrupted(self, folder, *args, **kwargs):
        seen.append(sorted(os.listdir(folder)))
        assert not (tmp_path / "out").exists()  # written elsewhere until it is complete
        raise stop

    monkeypatch.setattr(transformers.PreTrainedTokenizerBase, "save_pretrained", interrupted)
    if stop is KeyboardInterrupt:
        with pytest.raises(KeyboardInterrupt):
            convert_gguf(tiny_gguf, str(tmp_path / "out"))
    else:
        with pytest.raises(OutputFileError, match=r"cannot write the converted folder \(No space left on device;"):
            convert_gguf(tiny_gguf, str(tmp_path / "out"))
    assert "model.safetensors" in seen[0]
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_the_command_line_converts_and_refuses_with_its_arguments_names(tiny_gguf, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "convert" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    assert "MODEL.gguf DIR" in capsys.readouterr().out
    assert main(["convert", "-q", tiny_gguf, str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    assert said.out.startswith(f"converted {os.path.realpath(tiny_gguf)} to {tmp_path / 'out'}: ") and said.err == ""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["convert", tiny_gguf, str(tmp_path / "mine")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"bartscore convert: error: DIR {tmp_path / 'mine'} holds 1 file(s) that a conversion")
    assert main(["convert", str(tmp_path / "mine" / "notes.txt"), str(tmp_path / "x")]) == 2
    assert "error: MODEL.gguf " in capsys.readouterr().err


@pytest.mark.slow
def test_the_real_smollm2_folder_is_convert_gguf_s_and_scores_as_its_file(smollm2_gguf, smollm2_folder):
    """The tests' plain SmolLM2 folder is this command's output (support/real_model.py), and scores as the file."""
    marker = json.loads(pathlib.Path(smollm2_folder, CONVERTED_MARKER).read_text(encoding="utf-8"))
    assert marker["source"] == os.path.realpath(smollm2_gguf)
    from_gguf = bart_score.BARTScorer(checkpoint=smollm2_gguf, device="cpu", chat=True)
    from_folder = bart_score.BARTScorer(checkpoint=smollm2_folder, device="cpu", chat=True)
    assert from_folder.score(CONDITIONS, TARGETS) == from_gguf.score(CONDITIONS, TARGETS)


@pytest.mark.slow
def test_a_folder_filled_while_the_file_is_converted_is_not_replaced(tiny_gguf, tmp_path, monkeypatch):
    target = tmp_path / "out"
    save = conversion._save

    def meanwhile(*args):
        written = save(*args)
        target.mkdir()
        (target / "notes.txt").write_text("written meanwhile", encoding="utf-8")
        return written

    monkeypatch.setattr(conversion, "_save", meanwhile)
    with pytest.raises(InputError, match=r"holds 1 file\(s\) that a conversion did not write"):
        convert_gguf(tiny_gguf, str(target))
    assert os.listdir(target) == ["notes.txt"] and os.listdir(tmp_path) == ["out"]


# ---------------------------------------------------------------------------------------------------------------------
# Nothing but a conversion's own files is ever removed


def _empty_marker(folder):
    """The issue's probe: a folder of the user's own with a marker that lists nothing ({})."""
    for name in os.listdir(folder):
        (folder / name).unlink()
    (folder / CONVERTED_MARKER).write_text("{}", encoding="utf-8")
    (folder / "thesis.tex").write_text("\\chapter{One}", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("keep", encoding="utf-8")


def _edit_marker(edit):
    def change(folder):
        marker = json.loads((folder / CONVERTED_MARKER).read_text(encoding="utf-8"))
        edit(marker)
        (folder / CONVERTED_MARKER).write_text(json.dumps(marker), encoding="utf-8")

    return change


def _changed_in_place(folder):
    """config.json's bytes changed, its size and modification time the same."""
    path = folder / "config.json"
    status = os.stat(path)
    path.write_bytes(path.read_bytes().replace(b'"', b"'", 1))
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def _linked(folder):
    """tokenizer.json replaced by a link to the user's copy of it (the same bytes)."""
    mine = folder.parent / "my-tokenizer.json"
    shutil.move(folder / "tokenizer.json", mine)
    (folder / "tokenizer.json").symlink_to(mine)


def _huge_marker(folder):
    with open(folder / CONVERTED_MARKER, "r+b") as handle:
        handle.truncate(1 << 30)  # a sparse GiB: read up to the bound of a marker, never whole


NOT_ONLY_A_CONVERSION = {
    "empty-marker": (_empty_marker, "has a bartscore-convert.json that does not list the files a conversion wrote"),
    "marker-of-before": (
        _edit_marker(lambda marker: marker.pop("files")),
        "has a bartscore-convert.json that does not list the files",
    ),
    "a-file-added": (
        lambda folder: (folder / "thesis.tex").write_text("mine", encoding="utf-8"),
        "holds 'thesis.tex', which a conversion did not write (its bartscore-convert.json does not list it)",
    ),
    "a-folder-added": (lambda folder: (folder / "runs").mkdir(), "holds 'runs', which a conversion did not write"),
    "a-file-changed": (_changed_in_place, "holds 'config.json', which is not as the conversion wrote it"),
    "a-file-linked": (_linked, "holds 'tokenizer.json', which is not as the conversion wrote it"),
    "a-name-of-control-characters": (
        lambda folder: (folder / "\x1b[2J\rnotes").write_text("mine", encoding="utf-8"),
        r"holds '\x1b[2J\rnotes', which a conversion did not write",
    ),
    "marker-lists-a-path": (
        _edit_marker(lambda marker: marker["files"].update({"../thesis.tex": marker["files"]["config.json"]})),
        "does not list the files",
    ),
    "marker-not-json": (
        lambda folder: (folder / CONVERTED_MARKER).write_text("{not json", encoding="utf-8"),
        "does not list the files",
    ),
    "marker-of-a-gib": (_huge_marker, "does not list the files"),
}


@pytest.mark.parametrize("case", NOT_ONLY_A_CONVERSION, ids=list(NOT_ONLY_A_CONVERSION))
def test_a_folder_that_is_not_a_conversion_alone_is_refused_and_left_as_it_is(
    case, tiny_gguf, converted, tmp_path, capsys
):
    """Each way a folder can hold more than, or other than, a conversion's own files: one line (exit status 2), before
    the file is converted, and nothing in the folder or beside it changed."""
    change, said = NOT_ONLY_A_CONVERSION[case]
    folder = tmp_path / "out"
    shutil.copytree(converted[0], folder)
    change(folder)
    before, beside = tree(tmp_path), sorted(os.listdir(tmp_path))
    assert main(["convert", "-q", tiny_gguf, str(folder)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"bartscore convert: error: DIR {folder} "), error
    assert said in error and "so it is not replaced" in error, error
    assert tree(tmp_path) == before and sorted(os.listdir(tmp_path)) == beside


@pytest.mark.slow
def test_a_file_written_into_the_folder_while_it_is_replaced_is_kept(tiny_gguf, converted, tmp_path, monkeypatch):
    """The race: a file comes into the folder after convert's first look. Written before the folder is moved aside,
    it is found there (the folder is put back whole, and refused); written into the folder moved aside after its last
    check (a writer that holds it open), it is kept there, and a warning says where."""
    folder = tmp_path / "out"
    shutil.copytree(converted[0], folder)
    load = conversion._load

    def meanwhile(gguf):
        loaded = load(gguf)
        (folder / "late.txt").write_text("written meanwhile", encoding="utf-8")
        return loaded

    monkeypatch.setattr(conversion, "_load", meanwhile)
    before = {**tree(folder), "late.txt": b"written meanwhile"}
    with pytest.raises(InputError, match=r"holds 'late.txt', which a conversion did not write"):
        convert_gguf(tiny_gguf, str(folder))
    assert tree(folder) == before and sorted(os.listdir(tmp_path)) == ["out"]

    monkeypatch.setattr(conversion, "_load", load)
    (folder / "late.txt").unlink()
    checked = conversion._not_a_conversion

    def then_written(path):
        problem = checked(path)
        if ".out.previous-" in path:
            pathlib.Path(path, "late.txt").write_text("written after the check", encoding="utf-8")
        return problem

    monkeypatch.setattr(conversion, "_not_a_conversion", then_written)
    with pytest.warns(BARTScoreWarning, match=r"holds files that a conversion did not write .*; they are kept in "):
        convert_gguf(tiny_gguf, str(folder))
    assert set(os.listdir(folder)) >= FOLDER_FILES and "late.txt" not in os.listdir(folder)
    (aside,) = [name for name in os.listdir(tmp_path) if name != "out"]
    assert aside.startswith(f".out.previous-{HOST}-{os.getpid()}-")
    assert tree(tmp_path / aside) == {"out": "folder", "out/late.txt": b"written after the check"}


@pytest.mark.slow
def test_folders_left_by_a_conversion_killed_outright_are_swept_by_the_next(tiny_gguf, converted, tmp_path):
    """SIGKILL leaves the folder being written, and may leave an earlier conversion moved aside: the next conversion
    into the same folder removes the first and puts the second back (or removes it, once the new one is in place),
    where their owner process is gone and they are this machine's; others are left alone."""
    gone, alive = dead_pid(), os.getpid()
    writing = tmp_path / f".out.converting-{HOST}-{gone}-abc"
    shutil.copytree(converted[0], writing)
    aside = tmp_path / f".out.previous-{HOST}-{gone}-def"
    shutil.copytree(converted[0], aside / "out")
    (aside / "out" / "config.json").touch()
    kept = {
        f".out.converting-{HOST}-{alive}-ghi": "a conversion under way",
        f".out.converting-00000000-{gone}-jkl": "another machine's",
        f".other.converting-{HOST}-{gone}-mno": "another folder's",
    }
    for name in kept:
        shutil.copytree(converted[0], tmp_path / name)
    before = tree(tmp_path)
    convert_gguf(tiny_gguf, str(tmp_path / "out"))
    assert sorted(os.listdir(tmp_path)) == sorted(["out", *kept])
    assert {path: data for path, data in tree(tmp_path).items() if path.split("/")[0] in kept} == {
        path: data for path, data in before.items() if path.split("/")[0] in kept
    }
    # An earlier conversion moved aside while the folder is there again: its own files removed, and nothing else.
    shutil.copytree(converted[0], aside / "out")
    (aside / "out" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.warns(BARTScoreWarning, match=r"they are kept in .*\.out\.previous-"):
        convert_gguf(tiny_gguf, str(tmp_path / "out"))
    assert tree(aside) == {"out": "folder", "out/notes.txt": b"mine"}


# ---------------------------------------------------------------------------------------------------------------------
# Full disks, size limits and signals


@pytest.mark.parametrize("limit", fast_cases([2_000, 100_000], [100_000]), ids=["config", "weights"])
def test_a_file_over_the_size_limit_is_one_line_and_leaves_nothing(limit, tiny_gguf, tmp_path, capsys):
    """RLIMIT_FSIZE (`prlimit --fsize`): the write fails with EFBIG (Python ignores SIGXFSZ) in transformers' JSON or
    safetensors' own writer; either way one line, exit status 1, and nothing under the folder's name or beside it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        status = main(["convert", "-q", tiny_gguf, str(tmp_path / "out")])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    error = capsys.readouterr().err
    assert status == 1 and error == (
        f"bartscore convert: cannot write the converted folder (File too large; nothing of it is left beside it): "
        f"{tmp_path / 'out'}\n"
    )
    assert os.listdir(tmp_path) == []


@contextlib.contextmanager
def small_disk(path, size):
    """A tmpfs of `size` bytes mounted at `path` (root only; skips elsewhere)."""
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here ({mounted.stderr.decode(errors='replace').strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


@pytest.mark.slow
def test_a_full_disk_at_any_step_is_one_line_and_leaves_nothing(tiny_gguf, converted, tmp_path, capsys):
    """A disk that fills while the weights, the tokenizer or the marker are written (tmpfs of growing sizes, 4 KiB
    apart up to what the folder takes): one line and exit status 1 with nothing left, or the whole folder."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs takes root")
    needed = sum(os.path.getsize(os.path.join(converted[0], name)) for name in converted[1])
    weights = os.path.getsize(os.path.join(converted[0], "model.safetensors"))
    failed = []
    for size in range(weights - (64 << 10), needed + (32 << 10), 4 << 10):
        with small_disk(tmp_path / str(size), size) as disk:
            status = main(["convert", "-q", tiny_gguf, str(disk / "out")])
            error = capsys.readouterr().err
            if status == 0:
                assert sorted(os.listdir(disk)) == ["out"] and set(os.listdir(disk / "out")) == set(converted[1])
                continue
            assert status == 1 and error == (
                f"bartscore convert: cannot write the converted folder (No space left on device; nothing of it is "
                f"left beside it): {disk / 'out'}\n"
            ), error
            assert os.listdir(disk) == []
            failed.append(size)
    assert failed and max(failed) > weights  # past the weights too: the tokenizer's or the marker's write


# A conversion in a process of its own that signals when the weights are written and waits while it writes the
# tokenizer: then stopped by a signal. Under 3 GiB of address space.
_STOPPED_CONVERSION = """
import os, resource, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal: a pytest-xdist worker ignores SIGINT
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import transformers
from bart_score.cli import main

def waiting(self, folder, *args, **kwargs):
    open(sys.argv[3], "w").close()
    time.sleep(120)

transformers.PreTrainedTokenizerBase.save_pretrained = waiting
sys.exit(main(["convert", "-q", sys.argv[1], sys.argv[2]]))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "stop, status, said",
    [(signal.SIGTERM, -signal.SIGTERM, ""), (signal.SIGINT, 130, "bartscore convert: interrupted\n")],
    ids=["sigterm", "ctrl-c"],
)
def test_a_conversion_stopped_by_a_signal_leaves_nothing(stop, status, said, tiny_gguf, tmp_path):
    """SIGTERM ends the process as SIGTERM does (status -15) once the folder being written is removed; Ctrl-C is one
    line and status 130. Either way within a minute, and nothing under the folder's name or beside it."""
    ready, work = tmp_path / "ready", tmp_path / "work"
    work.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_CONVERSION, tiny_gguf, str(work / "out"), str(ready)],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(1200):
            if ready.exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert ready.exists(), child.communicate(timeout=60)
        (writing,) = os.listdir(work)
        assert writing.startswith(f".out.converting-{HOST}-{child.pid}-")
        assert "model.safetensors" in os.listdir(work / writing)
        child.send_signal(stop)
        _, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == status and stderr == said, stderr
    assert os.listdir(work) == []
