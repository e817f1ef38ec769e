"""The command line run as users run it: `python bartscore.py ...` in a subprocess of its own; the texts its tests
score; every argparse action of a parser and its subcommands."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from support.extras import skip_if_refused_for_a_missing_extra

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Three examples the command line's tests score: their sources, two references of each, and two systems' outputs.
SOURCES = ["This is interesting.", "The cat sat on the mat all day.", "I feel good today."]
REFERENCES_1 = ["This is fun.", "A cat sat on a mat.", "I am happy."]
REFERENCES_2 = ["It is fun.", "The cat was on the mat.", "Today I feel good."]
SYSTEM_A = ["This is fun indeed.", "A cat.", "Good day."]
SYSTEM_B = ["Fun.", "The dog sat.", "I feel bad today."]


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


# Runs a command under an address-space limit and a wall-clock limit, and writes its exit status and peak resident
# bytes to a file. A lean interpreter of its own starts it: a process forked from a large one (pytest with torch
# loaded) reports the parent's peak as its own ru_maxrss, which survives exec.
_CAPPED_LAUNCHER = """
import json, os, resource, signal, sys
memory, seconds, report, *command = sys.argv[1:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
    os.execv(command[0], command)
signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
signal.alarm(int(seconds))
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as handle:
    json.dump({"status": os.waitstatus_to_exitcode(status), "peak": usage.ru_maxrss * 1024}, handle)
"""


def run_cli_capped(*args, memory, seconds, env=()):
    """(exit status, stderr, wall seconds, peak resident bytes) of `bartscore.py args` run as run_cli runs it, under
    an address-space limit of `memory` bytes and killed after `seconds` (exit status -9), so that a bomb fails its
    test instead of taking the machine: what a probe of hostile input runs under."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        command = [sys.executable, os.path.join(ROOT, "bartscore.py"), *args]
        started = time.monotonic()
        completed = subprocess.run(
            [sys.executable, "-c", _CAPPED_LAUNCHER, str(memory), str(seconds), report, *command],
            capture_output=True,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **dict(env)},
            timeout=seconds + 60,
        )
        elapsed = time.monotonic() - started
        with open(report, encoding="utf-8") as handle:
            ended = json.load(handle)
    return ended["status"], completed.stderr, elapsed, ended["peak"]


def tsv_scores(stdout):
    """(header, rows as dicts) of the CLI's tab-separated table."""
    lines = stdout.strip().split("\n")
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:]]
    return header, rows


def parser_actions(parser):
    """Every action of an argparse parser and of its subcommands' parsers, depth first."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from parser_actions(subparser)
