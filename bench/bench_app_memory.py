#!/usr/bin/env python
"""Resident memory of the Space under a long run of Compare requests.

It builds the tiny random BART checkpoint of the tests, serves the Space (app.py) on it in a child process, exactly
as `python app.py` serves it, and sends `--requests` Compare requests through gradio_client, each with texts never
seen before (as real users send them). Every `--every` requests it prints the server's resident memory (VmRSS from
/proc). The growth over the second half of the run shows whether memory keeps growing or levels off.

    python bench/bench_app_memory.py --requests 1000 --every 100
    python bench/bench_app_memory.py --requests 1000 --every 100 --server-env MALLOC_ARENA_MAX=  # glibc default

Server settings can be varied with --server-env NAME=VALUE (repeatable; an empty value unsets the variable), and an
older version of the app measured with --repo (e.g. `git archive <commit> | tar -x -C /tmp/before`).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

import _setup  # noqa: F401
import space_server


def compare_arguments(rng):
    from support.text import english_like_text

    source = english_like_text(rng, rng.randint(20, 70))
    references = "\n".join(english_like_text(rng, rng.randint(10, 30)) for _ in range(rng.randint(1, 3)))
    candidates = [english_like_text(rng, rng.randint(8, 40)) for _ in range(rng.randint(2, 6))]
    settings = ["tiny", ["faithfulness", "precision", "recall", "f_score"], "mean", "none", "", "encoder"]
    return [*settings, source, references, *candidates, *[""] * (6 - len(candidates))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100, help="print the resident memory every this many requests")
    parser.add_argument("--concurrency", type=int, default=1, help="requests in flight at once (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument(
        "--repo",
        default=space_server.REPO,
        help="the checkout whose app.py is served (default: this one), e.g. an older commit's",
    )
    args = parser.parse_args()

    from support.models import build_tiny

    with tempfile.TemporaryDirectory(prefix="bartscore-memory-") as workdir:
        checkpoint = build_tiny("bart", os.path.join(workdir, "tiny"))
        environment = space_server.server_environment(args.server_env)
        with space_server.served(checkpoint, workdir, repo=args.repo, environment=environment) as (url, server):
            client = space_server.connect(url, server)
            rng = random.Random(args.seed)
            print(
                f"server settings: {' '.join(args.server_env) or '(inherited environment)'}; "
                f"{args.concurrency} request(s) in flight at once"
            )
            print(f"{'requests':>8}  {'RSS MiB':>8}  {'seconds':>8}")
            start = time.monotonic()
            figures = [(0, space_server.resident_mib(server.pid))]
            print(f"{0:8d}  {figures[-1][1]:8.0f}  {0:8.1f}")
            for number in range(args.concurrency, args.requests + 1, args.concurrency):
                jobs = [client.submit(*compare_arguments(rng), api_name="/compare") for _ in range(args.concurrency)]
                for job in jobs:
                    job.result()
                if number % args.every < args.concurrency or number + args.concurrency > args.requests:
                    figures.append((number, space_server.resident_mib(server.pid)))
                    print(f"{number:8d}  {figures[-1][1]:8.0f}  {time.monotonic() - start:8.1f}", flush=True)
            half = min(figures, key=lambda figure: abs(figure[0] - args.requests / 2))
            last = figures[-1]
            print(
                f"growth: {last[1] - figures[0][1]:+.0f} MiB over the run; {last[1] - half[1]:+.0f} MiB over requests "
                f"{half[0]}-{last[0]} ({(last[1] - half[1]) / max(1, last[0] - half[0]) * 1000:+.0f} MiB per 1000)"
            )


if __name__ == "__main__":
    main()
