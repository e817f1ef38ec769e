"""The command line run as users run it: `python bartscore.py ...` in a subprocess of its own."""

import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

from support.extras import skip_if_refused_for_a_missing_extra

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_cli(*args, launcher=(), cwd=None, env=(), timeout=600):
    """(exit status, stdout, stderr) of `bartscore.py args` run by this Python, offline, behind `launcher` (e.g.
    torchrun's arguments), in `cwd`, with `env` added to this process's environment. One thread: the tests' models
    are tiny, and threads only contend on a busy machine. A command refused for an extra that this environment lacks
    skips the test (support/extras.py)."""
    completed = subprocess.run(
        [sys.executable, *launcher, os.path.join(ROOT, "bartscore.py"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **dict(env)},
    )
    if completed.returncode != 0:
        skip_if_refused_for_a_missing_extra(completed.stderr)
    return completed.returncode, completed.stdout, completed.stderr


def run_cli_capped(*args, memory, seconds, env=()):
    """(exit status, stderr, wall seconds, peak resident bytes) of `bartscore.py args` run as run_cli runs it, under
    an address-space limit of `memory` bytes and killed after `seconds` (exit status -9), so that a bomb fails its
    test instead of taking the machine: what a probe of hostile input runs under."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    with tempfile.TemporaryFile() as stderr:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "bartscore.py"), *args],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **dict(env)},
            preexec_fn=limit,
        )
        killer = threading.Timer(seconds, process.kill)
        killer.start()
        _, status, usage = os.wait4(process.pid, 0)  # its own usage: the peak resident size is the child's
        killer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - started
        stderr.seek(0)
        return process.returncode, stderr.read().decode("utf-8", "replace"), elapsed, usage.ru_maxrss * 1024


def tsv_scores(stdout):
    """(header, rows as dicts) of the CLI's tab-separated table."""
    lines = stdout.strip().split("\n")
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    return header, rows
