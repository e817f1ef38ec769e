#!/usr/bin/env python
"""Time and peak memory of hostile file inputs, for this checkout and, with --before, another one side by side.

Cases: `bartscore score -s /dev/zero` and `--baseline /dev/urandom` (an endless file given as an input), and
`bartscore meta-eval --data summeval=bomb.pkl` (a data.pkl whose 10,000 documents are one record reused through the
pickle's memo). Each command runs in a fresh interpreter whose resident memory is watched: it is killed when it passes
--cap-gib (so that the old code cannot take the machine down) or --timeout seconds; the figures printed are its wall
time, its peak resident memory and how it ended.

    python bench/bench_hostile_inputs.py [--before /path/to/an/older/checkout] [--cap-gib 3] [--timeout 120]
"""

import argparse
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time

from _setup import REPO


def bomb_pickle(path, records=10_000, source_words=30_000):
    """A summeval-layout data.pkl whose `records` documents are all one record (a source of `source_words` words)."""
    record = {
        "src": "word " * source_words,
        "ref_summ": "a reference .",
        "sys_summs": {
            "M0": {
                "sys_summ": "a summary .",
                "scores": dict.fromkeys(("coherence", "consistency", "fluency", "relevance"), 1.0),
            }
        },
    }
    with open(path, "wb") as handle:
        pickle.dump({f"doc-{index}": record for index in range(records)}, handle, protocol=4)


def cases(folder):
    texts = os.path.join(folder, "texts.txt")
    with open(texts, "w", encoding="utf-8") as handle:
        handle.write("The cat sat on the mat .\nA dog ran in the park .\n")
    bomb = os.path.join(folder, "bomb.pkl")
    bomb_pickle(bomb)
    model = os.path.join(folder, "no-model")  # never loaded: the input is refused (or read) first
    return {
        "score -s /dev/zero": ["score", "-m", model, "-s", "/dev/zero", "-t", texts],
        "score --baseline /dev/urandom": ["score", "-m", model, "-s", texts, "-t", texts, "--baseline", "/dev/urandom"],
        f"meta-eval --data bomb.pkl ({os.path.getsize(bomb) // 1024} KiB)": [
            "meta-eval",
            "-m",
            model,
            "-b",
            "summeval",
            "--no-detokenize",
            "--data",
            f"summeval={bomb}",
            "-o",
            os.path.join(folder, "out"),
            "--cache",
            os.path.join(folder, "cache.jsonl"),
        ],
    }


def resident_bytes(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(checkout, command, cap, timeout, env=()):
    """(seconds, peak resident bytes, stdout, how it ended) of `python COMMAND` run from `checkout`, offline, with
    `env` added, killed past `cap` resident bytes or `timeout` seconds. Also bench_checkpoint_bombs.py's."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:  # files: a pipe could fill and stall
        process = subprocess.Popen(
            [sys.executable, *command],
            cwd=checkout,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": checkout, **dict(env)},
            stdout=stdout,
            stderr=stderr,
        )
        peak, ended = 0, None
        while True:  # os.wait4, not Popen.poll, so that the child's own peak (ru_maxrss) is had when it is reaped
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, resident_bytes(process.pid))
            elapsed = time.perf_counter() - started
            if peak > cap or elapsed > timeout:
                process.send_signal(signal.SIGKILL)
                limit = f"the {cap / 2**30:g} GiB cap" if peak > cap else f"the {timeout:g} s timeout"
                ended = f"killed at {limit}"
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        peak = max(peak, usage.ru_maxrss * 1024)
        stdout.seek(0)
        stderr.seek(0)
        output = stdout.read().decode("utf-8", "replace").strip()
        error = stderr.read().decode("utf-8", "replace").strip().splitlines()
    if ended is None:
        ended = f"exit {process.returncode}: {(error[-1] if error else '')[:160]}"
    else:
        ended += f" after {seconds:.1f} s"
    return seconds, peak, output, ended


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="CHECKOUT", help="an older checkout to measure beside this one")
    parser.add_argument("--cap-gib", type=float, default=3.0, help="kill a run past this resident memory (GiB)")
    parser.add_argument("--timeout", type=float, default=120.0, help="kill a run past this many seconds")
    args = parser.parse_args()
    checkouts = [("before", args.before)] if args.before else []
    checkouts.append(("after", REPO))
    with tempfile.TemporaryDirectory() as folder:
        for name, arguments in cases(folder).items():
            print(f"== {name}")
            for label, checkout in checkouts:
                command = ["-m", "bart_score", *arguments]
                seconds, peak, _, ended = measure(checkout, command, args.cap_gib * 2**30, args.timeout)
                print(f"  {label:<6}  {seconds:7.2f} s  peak {peak / 2**20:8.0f} MiB  {ended}")


if __name__ == "__main__":
    main()
