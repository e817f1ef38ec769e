#!/usr/bin/env python
"""Chat scoring's cost per ``compute()`` of the metric: the chat template's renderer, and chat against plain scoring,
side by side in one run on the same weights.

Models: the tests' tiny ChatML Llama (tests/support/models.py build_tiny_chat, built in a temporary folder), and the
real SmolLM2-135M-Instruct GGUF file where the tests' model cache holds it (smollm2-gguf-*, tests/support/
real_model.py), or --checkpoint. Each model is loaded as the metric twice, with chat=True and without; the calls then
alternate, --calls of each, on the same --pairs (source, paraphrase, summary) triples of the
real-model tests' news items (tests/support/news_texts.py), every direction:

  plain           compute() without chat;
  chat            compute() with chat=True: the renderer's process kept for the scorer's life (as chat scoring runs);
  chat, a process per request
                  the same, with the renderer's process ended before each request, so that every request starts one
                  (as chat scoring did before the process was kept).

Torch runs on --threads threads (default 1: on a machine that other jobs share, more threads wait at every barrier
for a core). It prints the median compute() time of each, the chat-on against chat-off difference, and the renderer's
time per compute() (the family's _render calls: the request written, rendered and read back), the first call apart.
The target: the kept renderer's median under 5 ms per compute() after the first. README.md beside this file gives the
command.
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import statistics
import tempfile
import time

import _setup  # noqa: F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import evaluate
import torch
import transformers
from support.cache import cache_folder
from support.metric import MODULE
from support.models import build_tiny_chat
from support.news_texts import ITEMS

transformers.utils.logging.disable_progress_bar()
evaluate.utils.logging.disable_progress_bar()

TARGET_MS = 5.0
METHODS = ("plain", "chat", "chat, a process per request")


def smollm2_gguf() -> str | None:
    """The tests' cached SmolLM2 GGUF file, if a test run has fetched it."""
    found = sorted(glob.glob(os.path.join(cache_folder(), "smollm2-gguf-*", "*.gguf")))
    return found[0] if found else None


def triples(count: int) -> tuple[list[str], list[str], list[str]]:
    """(sources, references, predictions): the tests' short news items, their paraphrases and faithful summaries."""
    items = [ITEMS[i % len(ITEMS)] for i in range(count)]
    return [i.source for i in items], [i.paraphrase for i in items], [i.summary for i in items]


class RenderTimer:
    """The time a chat family spends in _render, per compute() call, wrapped around the family's own method."""

    def __init__(self, family: object, fresh_process: bool) -> None:
        self.family = family
        self.fresh_process = fresh_process
        self.seconds = 0.0
        self.requests = 0
        self._render = family._render  # type: ignore[attr-defined]
        family._render = self  # type: ignore[attr-defined]

    def __call__(self, conversations: list) -> list[str]:
        if self.fresh_process:
            self.family.renderer.stop()  # type: ignore[attr-defined]
        start = time.perf_counter()
        try:
            return self._render(conversations)
        finally:
            self.seconds += time.perf_counter() - start
            self.requests += 1

    def remove(self) -> None:
        self.family._render = self._render  # type: ignore[attr-defined]


def measure(checkpoint: str, calls: int, pairs: int) -> dict[str, dict[str, list[float]]]:
    """{method: {"compute": [ms per call], "render": [ms per call], "requests": [per call]}}, the first call of each
    method included (measure()'s caller sets it apart)."""
    sources, references, predictions = triples(pairs)
    plain = evaluate.load(MODULE, checkpoint, device="cpu")
    chat = evaluate.load(MODULE, checkpoint, device="cpu", chat=True)
    figures: dict[str, dict[str, list[float]]] = {m: {"compute": [], "render": [], "requests": []} for m in METHODS}
    for _ in range(calls):
        for method in METHODS:
            metric = plain if method == "plain" else chat
            timer = None if method == "plain" else RenderTimer(metric.scorer.family, "per request" in method)
            start = time.perf_counter()
            metric.compute(predictions=predictions, references=references, sources=sources)
            figures[method]["compute"].append(1000 * (time.perf_counter() - start))
            if timer is not None:
                timer.remove()
                figures[method]["render"].append(1000 * timer.seconds)
                figures[method]["requests"].append(timer.requests)
    return figures


def report(name: str, figures: dict[str, dict[str, list[float]]], pairs: int) -> None:
    print(f"\n## {name}: {pairs} pairs, every direction, {len(figures['plain']['compute'])} calls of each\n")
    print("| method | compute() median ms | renderer ms per call: first | after it, median | max | requests |")
    print("|---|---|---|---|---|---|")
    for method in METHODS:
        compute, render = figures[method]["compute"][1:], figures[method]["render"]
        if not render:
            print(f"| {method} | {statistics.median(compute):.1f} | – | – | – | – |")
            continue
        requests = statistics.median(figures[method]["requests"])
        print(
            f"| {method} | {statistics.median(compute):.1f} | {render[0]:.1f} | {statistics.median(render[1:]):.2f} | "
            f"{max(render[1:]):.2f} | {requests:g} |"
        )
    plain, chat = (statistics.median(figures[m]["compute"][1:]) for m in ("plain", "chat"))
    fresh = statistics.median(figures["chat, a process per request"]["compute"][1:])
    kept = statistics.median(figures["chat"]["render"][1:])
    print(
        f"\nchat on against off: +{chat - plain:.1f} ms per compute() (+{fresh - plain:.1f} ms with a process per "
        f"request); the kept renderer's {kept:.2f} ms per call after the first: "
        f"{'within' if kept < TARGET_MS else 'OVER'} the {TARGET_MS:g} ms target"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="compute() calls of each method (default 20)")
    parser.add_argument("--pairs", type=int, default=3, help="predictions per call (default 3)")
    parser.add_argument("--checkpoint", help="a chat model to measure instead of the cached SmolLM2 GGUF file")
    parser.add_argument("--threads", type=int, default=1, help="torch's threads (default 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="bartscore-bench-chat-") as folder:
        tiny = build_tiny_chat("llama", "chatml", pathlib.Path(folder))
        report("tiny ChatML Llama", measure(tiny, args.calls, args.pairs), args.pairs)
    real = args.checkpoint or smollm2_gguf()
    if real is None:
        print("\n(no SmolLM2 GGUF file in the tests' model cache: run the real-model tests once, or give --checkpoint)")
        return
    report(os.path.basename(real), measure(real, args.calls, args.pairs), args.pairs)


if __name__ == "__main__":
    main()
