"""The engine of another checkout (an older commit's worktree), timed on a call in a fresh process, so that a
benchmark can set it beside this checkout's engine in the same run. Used by bench_machine.py's --before.

Nothing here imports bart_score at the top: the child puts the other checkout first on its path before it does, and
checks that the engine it timed is that checkout's."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

import numpy as np


def time_engine_of(root: str, checkpoint: str, options: dict, call: dict, repeat: int, threads: int) -> tuple:
    """(best wall seconds of `repeat` calls after a warm-up, {direction: scores}) of root's engine loaded with
    `options`, float32 on the CPU, in a fresh process."""
    job = (os.path.abspath(root), checkpoint, call, repeat, threads, options)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_timed_call, (job,))


def _timed_call(job: tuple) -> tuple:
    root, checkpoint, call, repeat, threads, options = job
    sys.path.insert(0, root)
    import torch

    import bart_score

    if not os.path.abspath(bart_score.__file__).startswith(root + os.sep):
        raise RuntimeError(f"bart_score came from {bart_score.__file__}, not from {root}")
    torch.set_num_threads(threads)
    scorer = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", dtype="float32", **options)
    scorer.score_directions(**call)  # the warm-up
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = scorer.score_directions(**call)
        best = min(best, time.perf_counter() - start)
    directions = ("faithfulness", "precision", "recall", "f_score")
    return best, {d: np.asarray(result[d], dtype=np.float64) for d in directions if d in result}
