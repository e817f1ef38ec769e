#!/usr/bin/env python
"""What the metric's pending examples cost in memory: the examples that add_batch keeps for the next compute, which
the metric holds itself (in memory) since it stopped using evaluate's private cache-file state (issue 44, item 5),
where evaluate's Arrow cache file held them before. This checkout, or another (--root, a checkout of an older commit,
made with `git worktree add /tmp/old <commit>`), measured by this script.

The tiny BART of the tests (built in a temporary folder, or --checkpoint); the scoring itself is stubbed, so that
the figures are the pending examples' keeping alone. Resident memory (VmRSS) after the load, after --batches
add_batch calls of --rows examples each (a short prediction and a source of about 300 characters), and the process's
peak (ru_maxrss) once compute has read them all back. README.md beside this file gives the command."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

import _setup

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def resident_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=_setup.REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--checkpoint", help="a BART checkpoint folder (default: the tests' tiny BART, built here)")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=5000)
    arguments = parser.parse_args()
    root = os.path.abspath(arguments.root)
    sys.path.insert(0, root)  # its bart_score before this checkout's

    import evaluate
    from support.models import build_tiny

    import bart_score

    with tempfile.TemporaryDirectory() as scratch:
        checkpoint = arguments.checkpoint or build_tiny("bart", os.path.join(scratch, "tiny-bart"))
        metric = evaluate.load(os.path.join(root, "bartscore.py"), str(checkpoint), device="cpu")
        metric.scorer.score_directions = lambda predictions, **options: {"rows": len(predictions)}
        loaded = resident_mb()
        started = time.perf_counter()
        source = "a longer source text with more words " * 8
        for batch in range(arguments.batches):
            metric.add_batch(
                predictions=[f"Prediction {batch}-{row}: words of the output." for row in range(arguments.rows)],
                sources=[f"Source {batch}-{row}: {source}" for row in range(arguments.rows)],
            )
        pending = resident_mb()
        rows = metric.compute()["rows"]
        seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"bart_score from {os.path.dirname(bart_score.__file__)}: {rows:,} examples pending")
    print(f"  loaded            {loaded:8.1f} MB")
    print(f"  examples pending  {pending:8.1f} MB  (+{pending - loaded:.1f})")
    print(f"  peak after compute{peak:8.1f} MB  (+{peak - loaded:.1f})")
    print(f"  add_batch and compute: {seconds:.1f} s")


if __name__ == "__main__":
    main()
