#!/usr/bin/env python
"""Scoring computations that run at once in the Space after submit-and-cancel rounds, and what a cancel stops.

The queue runs one scoring job at a time. Cancelling a job frees its queue slot at once; this measures whether the
cancelled job's computation goes on beside the next one, and whether it goes on at all. It serves the Space on the
tiny random BART of the tests (bench/space_server.py), counts in the server the engine calls (BARTScorer.score)
running at any moment, and from one gradio_client:

1. sends `--rounds` Batch jobs, each cancelled a second after the queue gave it the slot, then one job that is left
   to finish; it prints the most computations seen running at once, how many started, and the seconds until the last
   job's result;
2. times one Batch job alone, then sends the same job and cancels it right after submit (before gradio_client knows
   its event id), then a small Compare; it prints the seconds until the Compare's result: the time the cancelled
   job's computation held the scoring thread.

    python bench/bench_app_cancel.py --rounds 3
    git archive <commit> | tar -x -C /tmp/before && python bench/bench_app_cancel.py --repo /tmp/before
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time

import _setup  # noqa: F401
import space_server

# Run in the server before the app is built: every engine call is counted while it runs.
COUNTING = """
import json, threading, bart_score
_state, _lock, _original = {{"running": 0, "peak": 0, "started": 0}}, threading.Lock(), bart_score.BARTScorer.score

def _write():
    with open({path!r} + ".tmp", "w") as handle:
        json.dump(_state, handle)
    import os
    os.replace({path!r} + ".tmp", {path!r})

def _counted(self, *args, **kwargs):
    with _lock:
        _state["running"] += 1
        _state["started"] += 1
        _state["peak"] = max(_state["peak"], _state["running"])
        _write()
    try:
        return _original(self, *args, **kwargs)
    finally:
        with _lock:
            _state["running"] -= 1
            _write()

bart_score.BARTScorer.score = _counted
"""


COMPARE = ["tiny", ["faithfulness"], "mean", "none", "", "encoder", "A source.", "A reference.", "a", "b", *[""] * 4]


def counts(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {"running": 0, "peak": 0, "started": 0}


def batch_file(folder: str, rows: int) -> str:
    """A file whose scoring takes some seconds on the tiny model: long sources, three systems."""
    path = os.path.join(folder, "outputs.csv")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "reference", "a", "b", "c"])
        for row in range(rows):
            source = f"Report {row}: " + " ".join(["the city report says the market was high"] * 12)
            writer.writerow([source, "The market was high.", "The market rose.", "Prices fell.", "A report."])
    return path


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="submit-and-cancel rounds (default 3)")
    parser.add_argument("--rows", type=int, default=300, help="rows of each job's file (the tests' limit, 300)")
    parser.add_argument("--repo", default=space_server.REPO, help="the checkout whose app is served (default: this)")
    args = parser.parse_args()

    from gradio_client import handle_file
    from gradio_client.utils import Status
    from support.models import build_tiny

    with tempfile.TemporaryDirectory(prefix="bartscore-cancel-") as workdir:
        checkpoint = build_tiny("bart", os.path.join(workdir, "tiny"))
        state = os.path.join(workdir, "engine-calls.json")
        upload = batch_file(workdir, args.rows)
        arguments = ["tiny", ["faithfulness"], "mean", "none", "", "encoder"]
        setup = COUNTING.format(path=state)
        with space_server.served(checkpoint, workdir, repo=args.repo, setup=setup) as (url, server):
            client = space_server.connect(url, server)
            start = time.monotonic()
            RUNNING = (Status.PROCESSING, Status.PROGRESS)
            for number in range(1, args.rounds + 1):
                job = client.submit(*arguments, handle_file(upload), api_name="/score_file")
                # Cancelled a second after the queue gave it the slot: time enough for its computation to start.
                wait_until(lambda job=job: job.status().code in RUNNING, 300, f"job {number} to be processed")
                time.sleep(1.0)
                job.cancel()
            last = client.submit(*arguments, handle_file(upload), api_name="/score_file")
            last.result(timeout=900)
            seconds = time.monotonic() - start
            wait_until(lambda: counts(state)["running"] == 0, 900, "the computations to end")
            figures = counts(state)
            alone, behind = cancelled_right_after_submit(client, arguments, handle_file(upload))
    print(f"app: {os.path.abspath(args.repo)}")
    print(f"{args.rounds} submit-and-cancel rounds, then one job left to finish ({args.rows} rows x 3 systems each)")
    print(f"most scoring computations running at once: {figures['peak']}")
    print(f"scoring computations started: {figures['started']}")
    print(f"seconds until the last job's result: {seconds:.1f}")
    print(f"one job alone: {alone:.1f} s; cancelled right after submit, a Compare sent next answered in {behind:.1f} s")


def cancelled_right_after_submit(client, arguments: list, upload) -> tuple[float, float]:
    """(seconds of the Batch job alone, seconds of a Compare sent after the same job cancelled right after submit)."""
    start = time.monotonic()
    client.submit(*arguments, upload, api_name="/score_file").result(timeout=900)
    alone = time.monotonic() - start
    job = client.submit(*arguments, upload, api_name="/score_file")
    job.cancel()
    start = time.monotonic()
    client.submit(*COMPARE, api_name="/compare").result(timeout=900)
    return alone, time.monotonic() - start


if __name__ == "__main__":
    main()
