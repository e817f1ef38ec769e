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
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

SERVER = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{repo!r}, {tests!r}]
    import app, app_server, space.batch
    settings = app_server.settings_for_tests({checkpoint!r}, {missing!r}, {checkpoint!r})  # no request uses the copier
    app.build_demo(settings).launch(
        server_name="127.0.0.1",
        server_port={port},
        quiet=True,
        ssr_mode=False,
        max_file_size=space.batch.MAX_UPLOAD_BYTES,
    )
    """
)


def resident_mib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_server(url, server, seconds=120):
    from gradio_client import Client

    deadline = time.monotonic() + seconds
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        try:
            return Client(url, analytics_enabled=False, verbose=False)
        except Exception:  # not listening yet
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def compare_arguments(rng):
    from tiny_bart import english_like_text

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
        "--repo", default=REPO, help="the checkout whose app.py is served (default: this one), e.g. an older commit's"
    )
    args = parser.parse_args()

    from tiny_bart import build_tiny_bart

    with tempfile.TemporaryDirectory(prefix="bartscore-memory-") as workdir:
        checkpoint = build_tiny_bart(os.path.join(workdir, "tiny"))
        port = free_port()
        environment = dict(os.environ)
        for assignment in args.server_env:
            name, _, value = assignment.partition("=")
            if value:
                environment[name] = value
            else:
                environment.pop(name, None)
        script = SERVER.format(
            repo=os.path.abspath(args.repo),
            tests=os.path.join(REPO, "tests"),
            checkpoint=checkpoint,
            missing=os.path.join(workdir, "missing"),
            port=port,
        )
        server = subprocess.Popen([sys.executable, "-c", script], env=environment, cwd=workdir)
        try:
            client = wait_for_server(f"http://127.0.0.1:{port}/", server)
            rng = random.Random(args.seed)
            print(
                f"server settings: {' '.join(args.server_env) or '(inherited environment)'}; "
                f"{args.concurrency} request(s) in flight at once"
            )
            print(f"{'requests':>8}  {'RSS MiB':>8}  {'seconds':>8}")
            start = time.monotonic()
            figures = [(0, resident_mib(server.pid))]
            print(f"{0:8d}  {figures[-1][1]:8.0f}  {0:8.1f}")
            for number in range(args.concurrency, args.requests + 1, args.concurrency):
                jobs = [client.submit(*compare_arguments(rng), api_name="/compare") for _ in range(args.concurrency)]
                for job in jobs:
                    job.result()
                if number % args.every < args.concurrency or number + args.concurrency > args.requests:
                    figures.append((number, resident_mib(server.pid)))
                    print(f"{number:8d}  {figures[-1][1]:8.0f}  {time.monotonic() - start:8.1f}", flush=True)
            half = min(figures, key=lambda figure: abs(figure[0] - args.requests / 2))
            last = figures[-1]
            print(
                f"growth: {last[1] - figures[0][1]:+.0f} MiB over the run; {last[1] - half[1]:+.0f} MiB over requests "
                f"{half[0]}-{last[0]} ({(last[1] - half[1]) / max(1, last[0] - half[0]) * 1000:+.0f} MiB per 1000)"
            )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
