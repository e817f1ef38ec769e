#!/usr/bin/env python
"""How fast the command line answers when no model is needed: `--help`, a subcommand's help, and usage errors.

Each command runs in a fresh interpreter, as a user runs it, --repeat times; the median and the slowest wall-clock
times are printed, with the modules that a run imports beyond the standard library's (torch must not be among them).

    python bench/bench_cli_startup.py [--repeat 7]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _setup import REPO

TARGET_SECONDS = 1.0


def commands(folder):
    missing = os.path.join(folder, "missing.txt")
    short = os.path.join(folder, "one-line.txt")
    longer = os.path.join(folder, "two-lines.txt")
    with open(short, "w", encoding="utf-8") as handle:
        handle.write("one\n")
    with open(longer, "w", encoding="utf-8") as handle:
        handle.write("one\ntwo\n")
    module = [sys.executable, "-m", "bart_score"]
    return {
        "bartscore --help": [*module, "--help"],
        "bartscore score --help": [*module, "score", "--help"],
        "python bartscore.py --help": [sys.executable, os.path.join(REPO, "bartscore.py"), "--help"],
        "usage error: unreadable file": [*module, "score", "-s", missing, "-t", short],
        "usage error: line counts differ": [*module, "score", "-s", short, "-t", longer],
        "usage error: unknown direction": [*module, "score", "-s", short, "-t", short, "-d", "fluency"],
    }


def heavy_modules(command):
    """The heavy libraries a command imports (from -X importtime's log)."""
    run = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True, cwd=REPO)
    names = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    return sorted(
        name
        for name in names
        if name in ("torch", "transformers", "datasets", "evaluate", "numpy", "scipy", "gradio", "pandas")
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'command':34} {'median s':>9} {'max s':>7}  exit  heavy imports")
        for name, command in commands(folder).items():
            times, status = [], None
            for _ in range(args.repeat):
                start = time.perf_counter()
                status = subprocess.run(command, capture_output=True, cwd=REPO).returncode
                times.append(time.perf_counter() - start)
            verdict = "" if statistics.median(times) < TARGET_SECONDS else f"  ABOVE {TARGET_SECONDS:g} s"
            print(
                f"{name:34} {statistics.median(times):9.3f} {max(times):7.3f}  {status:4}  "
                f"{', '.join(heavy_modules(command)) or '-'}{verdict}"
            )


if __name__ == "__main__":
    main()
