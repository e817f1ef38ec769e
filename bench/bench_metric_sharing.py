#!/usr/bin/env python
"""What a second ``evaluate.load`` of the metric costs in memory: with the same checkpoint and settings it shares the
first one's engine (bart_score.integrations._shared_engines), beside a load with other settings, which loads a model of
its own; side by side in one process.

The model: the real SmolLM2-135M-Instruct where the tests' model cache holds it (its plain-folder conversion,
smollm2-135m-instruct-*, else its GGUF file, smollm2-gguf-*; tests/support/real_model.py), else the tests' tiny BART
(built in a temporary folder), or --checkpoint. Steps, the resident memory (VmRSS) read after each (after a garbage
collection):

  first load           evaluate.load(bartscore.py, checkpoint)
  second load          the same again: the target is under 50 MB more
  other settings       evaluate.load with another max_length, for what a model of its own costs

Each load then scores the same three (source, summary) pairs, and the first two must give the same scores. With
--release, the loads are dropped in turn, and the memory read after each. README.md beside this file gives the
command."""

from __future__ import annotations

import argparse
import gc
import glob
import os
import pathlib
import tempfile

import _setup  # noqa: F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import evaluate
import transformers
from support.cache import cache_folder
from support.metric import MODULE
from support.models import build_tiny
from support.news_texts import ITEMS

transformers.utils.logging.disable_progress_bar()
evaluate.utils.logging.disable_progress_bar()

TARGET_MB = 50.0


def resident_mb() -> float:
    """This process's resident memory (VmRSS), in MB, after a garbage collection."""
    gc.collect()
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def real_model() -> str | None:
    """The tests' cached SmolLM2: its plain folder, else its GGUF file, if a test run has made either."""
    folders = sorted(glob.glob(os.path.join(cache_folder(), "smollm2-135m-instruct-*")))
    files = sorted(glob.glob(os.path.join(cache_folder(), "smollm2-gguf-*", "*.gguf")))
    return (folders or files or [None])[0]


def measure(checkpoint: str, release: bool) -> None:
    sources, summaries = [item.source for item in ITEMS[:3]], [item.summary for item in ITEMS[:3]]
    print(f"## {checkpoint}\n")
    print("| step | VmRSS MB | change MB |")
    print("|---|---|---|")
    last = resident_mb()
    print(f"| before | {last:,.0f} | |")
    loads, scores, added = [], [], {}
    for step, settings in (("first load", {}), ("second load", {}), ("other settings", {"max_length": 256})):
        loads.append(evaluate.load(MODULE, checkpoint, device="cpu", **settings))
        now = resident_mb()
        added[step] = now - last
        print(f"| {step} | {now:,.0f} | {added[step]:+,.1f} |")
        scores.append(loads[-1].compute(predictions=summaries, sources=sources)["faithfulness"])
        last = resident_mb()  # what scoring itself keeps (buffers, caches) is not the next load's
    shared = loads[0].scorer is loads[1].scorer and loads[2].scorer is not loads[0].scorer
    if release:
        for step in ("first dropped", "second dropped", "other dropped"):
            loads.pop(0)
            now = resident_mb()
            print(f"| {step} | {now:,.0f} | {now - last:+,.1f} |")
            last = now
    verdict = "within" if added["second load"] < TARGET_MB else "OVER"
    print(
        f"\nsecond load: {added['second load']:+,.1f} MB ({verdict} the {TARGET_MB:g} MB target), against "
        f"{added['other settings']:+,.1f} MB for a model of its own; one engine for the first two: {shared}; the "
        f"same scores: {scores[0] == scores[1]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="the model to load (default: the cached SmolLM2, else a tiny BART)")
    parser.add_argument("--release", action="store_true", help="also drop the loads in turn")
    args = parser.parse_args()
    checkpoint = args.checkpoint or real_model()
    if checkpoint is not None:
        measure(checkpoint, args.release)
        return
    with tempfile.TemporaryDirectory(prefix="bartscore-bench-sharing-") as folder:
        measure(build_tiny("bart", pathlib.Path(folder) / "bart"), args.release)


if __name__ == "__main__":
    main()
