"""The documents' examples run as written, given a checkpoint.

The documents are README.md, every docs/*.md and bench/README.md. In each, every Python block runs, in order, as one
script in a fresh process (later blocks use earlier blocks' names, as a reader would run them), and every command of
every shell block runs on its own, with `bartscore` (or `.venv/bin/bartscore`) standing for the installed command.
They run offline in a temporary working folder that holds the input files the examples read, the paraphrase weights
file (bart.pth) and a private Hugging Face cache in which tiny test checkpoints stand under the Hub ids the examples
use.

A block that cannot run here (it needs a GPU, several processes, a server, the BARTScore release's data, an install
from the package index, or hours) says so on the line just above its opening fence, `<!-- not run: the reason -->`;
the fast tests check that every Python and shell block either runs or carries such a reason, and that the documents'
relative links resolve. Also here: the README keeps the Space's front matter, which the wheel's long description
leaves out."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from email import message_from_string

import pytest
import torch
from support.models import build_tiny_chat, tiny_checkpoint_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMIT = "0" * 40

DOCUMENTS = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
DOCUMENTS.append(os.path.join("bench", "README.md"))
# The documents the README's "Further references" promises.
PROMISED = ["cli", "meta-eval", "space", "models", "scaling", "reading-scores", "fidelity"]

RUN_LANGUAGES = ("python", "bash")
OTHER_LANGUAGES = ("text", "bibtex")  # output shown and citations: nothing to run
FENCE = re.compile(r"```(\S*)")
NOT_RUN = re.compile(r"<!-- not run: (\S.*?) -->")


@dataclass(frozen=True)
class Block:
    document: str
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    not_run: str | None  # the reason given above the fence, if any


def read(document: str) -> str:
    with open(os.path.join(ROOT, document), encoding="utf-8") as handle:
        return handle.read()


def blocks(document: str) -> list[Block]:
    """The fenced code blocks of a document, with the not-run reason written just above each."""
    lines = read(document).splitlines()
    found = []
    index = 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index].rstrip())
        if opening:
            start = index
            index += 1
            while index < len(lines) and lines[index].rstrip() != "```":
                index += 1
            assert index < len(lines), f"{document}:{start + 1}: a code block is never closed"
            above = NOT_RUN.fullmatch(lines[start - 1].strip()) if start else None
            text = "\n".join(lines[start + 1 : index]) + "\n"
            found.append(Block(document, start + 1, opening.group(1), text, above.group(1) if above else None))
        index += 1
    return found


def runnable(language: str) -> list[Block]:
    """The blocks in `language` that run, across every document."""
    every = [block for document in DOCUMENTS for block in blocks(document)]
    return [block for block in every if block.language == language and not block.not_run]


def commands(block: Block) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped."""
    found = []
    for command in block.text.replace("\\\n", " ").splitlines():
        command = command.split(" #")[0].strip()
        if command and not command.startswith("#"):
            found.append(command)
    return found


def test_the_documents_are_there():
    for name in PROMISED:
        assert os.path.join("docs", f"{name}.md") in DOCUMENTS
        assert f"](docs/{name}.md)" in read("README.md"), f"the README does not link docs/{name}.md"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_example_runs_or_says_why_not(document):
    lines = read(document).splitlines()
    fences = {block.line for block in blocks(document)}
    for number, line in enumerate(lines, 1):
        assert not (line.lstrip().startswith("```") and line.startswith(" ")), (
            f"{document}:{number}: an indented code fence, which the documentation tests would not see"
        )
        if line.strip().startswith("<!-- not run"):
            assert NOT_RUN.fullmatch(line.strip()), f"{document}:{number}: write '<!-- not run: the reason -->'"
            assert number + 1 in fences, f"{document}:{number}: a not-run mark that is not just above a code block"
    for block in blocks(document):
        assert block.language in RUN_LANGUAGES + OTHER_LANGUAGES, (
            f"{document}:{block.line}: a code block in {block.language or 'no language'!r}; "
            f"name one of {RUN_LANGUAGES + OTHER_LANGUAGES}"
        )
        assert block.language in RUN_LANGUAGES or not block.not_run, f"{document}:{block.line}: nothing to mark"


def heading_anchors(document: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lowercased, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", read(document), flags=re.DOTALL), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_relative_links_resolve(document):
    folder = os.path.dirname(document)
    for target in re.findall(r"\]\(([^)\s]+)\)", read(document)):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        linked = os.path.normpath(os.path.join(folder, path)) if path else document
        assert os.path.exists(os.path.join(ROOT, linked)), f"{document}: the link {target!r} names no file"
        if anchor:
            assert anchor in heading_anchors(linked), f"{document}: the link {target!r} names no heading of {linked}"


def hub_cache(folder, checkpoint, names):
    """A Hugging Face cache holding `checkpoint`'s files under each Hub id in `names`."""
    for name in names:
        repository = folder / f"models--{name.replace('/', '--')}"
        (repository / "refs").mkdir(parents=True)
        (repository / "refs" / "main").write_text(COMMIT)
        shutil.copytree(checkpoint, repository / "snapshots" / COMMIT)
    return folder


# The family examples' Hub ids (directly or through named configurations), each served by a tiny model of its family.
FAMILY_CHECKPOINTS = {
    "mbart50": "facebook/mbart-large-50-many-to-many-mmt",
    "mt5": "google/mt5-base",
    "pegasus": "google/pegasus-xsum",
    "marian": "Helsinki-NLP/opus-mt-de-en",
    "qwen2": "Qwen/Qwen2.5-0.5B",
    "opt": "facebook/opt-350m",
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, copying_checkpoint):
    """The working folder and the environment the examples run in. BART's names are served by the tiny BART trained
    to copy (so that baselines have a scale), the other families' by tiny models of their own."""
    tiny_checkpoint = copying_checkpoint
    root = tmp_path_factory.mktemp("documents")
    work = root / "work"
    work.mkdir()
    shutil.copyfile(os.path.join(ROOT, "bartscore.py"), work / "bartscore.py")  # evaluate.load("./bartscore.py")
    from transformers import BartForConditionalGeneration

    torch.save(
        BartForConditionalGeneration.from_pretrained(tiny_checkpoint, trust_remote_code=False).state_dict(),
        work / "bart.pth",
    )
    lines = {
        "source.txt": ["A cat sat on the mat all day.", "It rained from dawn to dusk.", "The team won the game."],
        "ref.txt": ["A cat sat.", "It rained.", "The team won."],
        "ref1.txt": ["The cat sat.", "Rain all day.", "A win."],
        "ref2.txt": ["A cat was on a mat.", "It rained all day.", "The team won it."],
        "system.txt": ["Cat.", "Rain.", "Win."],
        "systemA.txt": ["A cat sat on a mat.", "It rained.", "They won."],
        "systemB.txt": ["The dog ran.", "It was sunny.", "They lost."],
        "systemC.txt": ["A cat.", "Rain fell.", "A game."],
    }
    for name, content in lines.items():
        (work / name).write_text("\n".join(content) + "\n", encoding="utf-8")
    rows = list(zip(lines["source.txt"], lines["ref.txt"], lines["systemA.txt"], lines["systemB.txt"]))
    (work / "data.jsonl").write_text(
        "".join(json.dumps({"source": s, "references": [r], "systemA": a, "systemB": b}) + "\n" for s, r, a, b in rows),
        encoding="utf-8",
    )
    (work / "data.csv").write_text(
        "source,reference,systemA,systemB\n" + "".join(f'"{s}","{r}","{a}","{b}"\n' for s, r, a, b in rows),
        encoding="utf-8",
    )
    (work / "texts.txt").write_text(  # the corpus of `bartscore baseline --corpus texts.txt`
        "\n".join(line for name in ("source.txt", "ref1.txt", "ref2.txt", "systemA.txt") for line in lines[name]),
        encoding="utf-8",
    )
    hub = hub_cache(root / "hub", tiny_checkpoint, ["facebook/bart-large-cnn", "facebook/bart-large"])
    for family, name in FAMILY_CHECKPOINTS.items():
        hub_cache(hub, tiny_checkpoint_for(tmp_path_factory, family), [name])
    # The chat-format examples' instruction-tuned model: a tiny Llama with SmolLM2's ChatML template.
    hub_cache(hub, build_tiny_chat("llama", "chatml", root / "chat-llama"), ["HuggingFaceTB/SmolLM2-135M-Instruct"])
    command = root / "bin" / "bartscore"  # the command that installing the project puts on the PATH
    command.parent.mkdir()
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bart_score "$@"\n')
    command.chmod(0o755)
    environment = {
        **os.environ,
        "PATH": f"{command.parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": ROOT,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(hub),
        "HF_HOME": str(root / "hf-home"),  # evaluate's and datasets' caches
        "CUDA_VISIBLE_DEVICES": "",
        "BARTSCORE_BASELINES": str(root / "baselines"),
    }
    # The baselines the rescaling examples use, made as the documents say: at the default place and in a named file.
    for output in ([], ["-o", "cnn-baseline.json"]):
        subprocess.run(
            ["bartscore", "baseline", "-m", "cnn", "--corpus", "texts.txt", "-q", *output],
            cwd=work,
            env=environment,
            check=True,
            capture_output=True,
        )
    return work, environment


PYTHON_DOCUMENTS = sorted({block.document for block in runnable("python")})


def test_the_examples_are_found():
    assert "README.md" in PYTHON_DOCUMENTS and len(runnable("python")) >= 6
    assert any(block.document == "README.md" for block in runnable("bash"))


@pytest.mark.slow
@pytest.mark.parametrize("document", PYTHON_DOCUMENTS)
def test_python_examples_run(workdir, document):
    work, environment = workdir
    script = "\n\n".join(block.text for block in runnable("python") if block.document == document)
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=work, env=environment, capture_output=True, text=True, timeout=900
    )
    assert completed.returncode == 0, f"{document}: {completed.stderr[-3000:]}"


COMMANDS = [(block.document, command) for block in runnable("bash") for command in commands(block)]


@pytest.mark.slow
@pytest.mark.parametrize(("document", "command"), COMMANDS, ids=[f"{d}: {c}" for d, c in COMMANDS])
def test_command_line_example_runs(workdir, tiny_checkpoint, document, command):
    work, environment = workdir
    # The set-up's environment is this one, and the "main job"'s local checkpoint folder is the tiny one.
    command = re.sub(r"(^|\s)\.venv/bin/python\b", rf"\1{sys.executable}", command)
    command = re.sub(r"(^|\s)\.venv/bin/", r"\1", command).replace("./bart-large-cnn", tiny_checkpoint)
    completed = subprocess.run(
        ["bash", "-c", command], cwd=work, env=environment, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, f"{document}: {command}\n{completed.stderr[-3000:]}"


def card_body(readme: str) -> str:
    """The README after its front matter, found plainly: the text after the second line that is `---`."""
    lines = readme.splitlines()
    closing = [index for index, line in enumerate(lines) if line == "---"][1]
    return "\n".join(lines[closing + 1 :]).strip()


def test_the_readme_keeps_the_space_front_matter():
    readme = read("README.md")
    assert readme.startswith("---\n")
    front_matter = readme[: readme.index("\n---\n", 3)]
    assert "sdk: gradio" in front_matter and "app_file: app.py" in front_matter


@pytest.mark.slow
def test_the_wheel_long_description_is_the_card_without_the_space_front_matter(tmp_path):
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, which must stay clean.
    sources = tmp_path / "sources"
    shutil.copytree(
        ROOT, sources, ignore=shutil.ignore_patterns(".*", "__pycache__", "build", "*.egg-info", "artifacts")
    )
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), sources],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("bartscore-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        name = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        metadata = message_from_string(archive.read(name).decode())
    description = metadata.get_payload()
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert not description.lstrip().startswith("---") and "sdk: gradio" not in description
    assert description.strip() == card_body(read("README.md"))
