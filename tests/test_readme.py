"""README.md's examples run as written, given a checkpoint.

The tiny test checkpoint is put in a private Hugging Face cache under the names the examples use
(facebook/bart-large-cnn, facebook/bart-large), the paraphrase weights file they load (bart.pth) and the input files
they read are written into a temporary working folder, and the examples run there, offline, in a fresh process:
every Python block in order (later blocks use earlier blocks' names, as a reader would run them), then every
command-line example, with `bartscore` standing for the installed command. Commands that need a GPU, several
processes (torchrun, accelerate), a server (app.py) or the BARTScore release's human judgments (meta-eval), and the
set-up commands, are not run."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch
from tiny_models import tiny_checkpoint_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMIT = "0" * 40


def readme_blocks(language):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        return re.findall(rf"```{language}\n(.*?)```", handle.read(), flags=re.DOTALL)


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
    root = tmp_path_factory.mktemp("readme")
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
    command = root / "bin" / "bartscore"  # the command `pip install .` puts on the PATH
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
    # The baselines the rescaling examples use, made as the README says: at the default place and in a named file.
    for output in ([], ["-o", "cnn-baseline.json"]):
        subprocess.run(
            ["bartscore", "baseline", "-m", "cnn", "--corpus", "texts.txt", "-q", *output],
            cwd=work,
            env=environment,
            check=True,
            capture_output=True,
        )
    return work, environment


def test_every_python_example_runs(workdir):
    work, environment = workdir
    blocks = readme_blocks("python")
    assert len(blocks) >= 6
    script = "\n\n".join(blocks)
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=work, env=environment, capture_output=True, text=True, timeout=900
    )
    assert completed.returncode == 0, completed.stderr[-3000:]


def command_lines():
    """Each command of the README's bash blocks, continuation lines joined, comments dropped."""
    commands = []
    for block in readme_blocks("bash"):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split(" #")[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


RUNNABLE = [
    command
    for command in command_lines()
    if command.startswith(("bartscore ", ".venv/bin/python bartscore.py "))
    and not re.search(r"cuda|torchrun|accelerate", command)
    and " meta-eval " not in command  # needs the release's human judgments; tests/test_meta_eval_cli.py runs it
]


def test_the_readme_has_command_line_examples():
    assert len(RUNNABLE) >= 5


@pytest.mark.parametrize("command", RUNNABLE)
def test_command_line_example_runs(workdir, tiny_checkpoint, command):
    work, environment = workdir
    # The set-up's "main job" names a local checkpoint folder: the tiny one stands in for it.
    command = command.replace(".venv/bin/python", sys.executable).replace("./bart-large-cnn", tiny_checkpoint)
    completed = subprocess.run(
        ["bash", "-c", command], cwd=work, env=environment, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
