#!/usr/bin/env python
"""A long fuzzing run: every fuzz target (tests/support/fuzz_targets.py) in turn, a round of examples each with a new
random seed, for as long as it is given, each example within its time and memory bounds. The property: any input ends
in a value or an error of the family (bart_score.errors.BARTScoreError); what breaks it is a finding.

Writes to --out (default: a new folder under the system's temporary one): findings/<target>-<n>.json for each
finding (its target, the input's repr, what happened, its seconds), hypothesis-db/ (Hypothesis' example database, so
that a later run with the same --out tries earlier findings first) and summary.json (the inputs tried, the findings,
the seconds and the slowest input of each target, the minutes run). A finding goes into the tests as a fixed case:
the input's repr, added to its target's `fixed`, and a test where its code is fixed. The long run also seeds the GGUF
target with the real SmolLM2 header (fetched as the tests fetch it, the first time).

    python bench/fuzz.py --minutes 30 [--out FOLDER] [--target NAME ...] [--examples-per-round 500]
"""

import argparse
import dataclasses
import json
import os
import random
import sys
import tempfile
import time

import _setup  # noqa: F401  (the checkout and tests/ first on the path)
from hypothesis.database import DirectoryBasedExampleDatabase
from support.fuzzing import EXAMPLE_SECONDS, EXTRA_MEMORY, all_targets, fuzz


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to run (default 30)")
    parser.add_argument("--out", help="the folder to write to (default: a new one under the temporary folder)")
    parser.add_argument("--target", action="append", help="a target to run (default: all); may be repeated")
    parser.add_argument("--examples-per-round", type=int, default=500, help="examples per target per round")
    parser.add_argument("--seconds", type=float, default=EXAMPLE_SECONDS, help="the time bound of one example")
    parser.add_argument("--memory-gib", type=float, default=EXTRA_MEMORY / 2**30, help="memory bound (GiB more)")
    args = parser.parse_args()
    targets = all_targets()
    names = args.target or list(targets)
    unknown = [name for name in names if name not in targets]
    if unknown:
        parser.error(f"no target {unknown[0]!r}; the targets are {', '.join(targets)}")
    out = args.out or tempfile.mkdtemp(prefix="bartscore-fuzz-")
    os.makedirs(os.path.join(out, "findings"), exist_ok=True)
    database = DirectoryBasedExampleDatabase(os.path.join(out, "hypothesis-db"))
    summary = {name: {"tried": 0, "findings": 0, "seconds": 0.0, "slowest": [0.0, ""]} for name in names}
    started, rounds = time.monotonic(), 0
    while time.monotonic() - started < args.minutes * 60:
        rounds += 1
        for name in names:
            if time.monotonic() - started >= args.minutes * 60:
                break
            report = fuzz(
                targets[name],
                examples=args.examples_per_round,
                thorough=True,
                seed=random.getrandbits(64),
                database=database,
                seconds=args.seconds,
                extra_memory=int(args.memory_gib * 2**30),
            )
            tally = summary[name]
            tally["tried"] += report.tried
            tally["seconds"] = round(tally["seconds"] + report.seconds, 1)
            if report.slowest[0] > tally["slowest"][0]:
                tally["slowest"] = [round(report.slowest[0], 3), report.slowest[1]]
            for finding in report.findings:
                tally["findings"] += 1
                path = os.path.join(out, "findings", f"{name}-{tally['findings']}.json")
                with open(path, "w", encoding="utf-8") as handle:
                    json.dump(dataclasses.asdict(finding), handle, indent=2, ensure_ascii=False)
                print(f"{name}: finding {tally['findings']}: {finding.error.splitlines()[-1][:200]}", flush=True)
            _write_summary(out, summary, started, rounds)
        print(f"round {rounds}: {sum(t['tried'] for t in summary.values()):,} inputs tried", flush=True)
    _write_summary(out, summary, started, rounds)
    for name, tally in summary.items():
        print(f"{name:<20} {tally['tried']:>9,} inputs  {tally['findings']} findings  slowest {tally['slowest'][0]} s")
    print(f"wrote {out}")
    return 1 if any(tally["findings"] for tally in summary.values()) else 0


def _write_summary(out, summary, started, rounds):
    minutes = round((time.monotonic() - started) / 60, 1)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump({"minutes": minutes, "rounds": rounds, "targets": summary}, handle, indent=2)


if __name__ == "__main__":
    sys.exit(main())
