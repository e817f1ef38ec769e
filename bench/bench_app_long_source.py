#!/usr/bin/env python
"""How long a long-source upload over the pair limit holds the Space, and how long another client's small Compare
waits behind it.

The Space is served on the tiny random BART of the tests (bench/space_server.py) with the Batch tab scoring
faithfulness over source windows (BARTSCORE_APP_LONG_SOURCE="windows;retriever=bm25") and texts of up to 5000
characters. One client uploads a probe within every limit but the pairs:

- outputs (the default): `--rows` rows of `--systems` system columns, each output `--sentences` one-letter sentences
  ("a. a. a. ...");
- with --sources: `--rows` rows (1000 here) of one short output, each source "Ph.D. " repeated to 5000 characters.

A second client sends a small Compare `--delay` seconds later. It prints the seconds until the upload's refusal (or
its result), the Compare's seconds (and the same Compare's seconds alone, on a warm model), and the server's peak
resident memory.

    python bench/bench_app_long_source.py
    python bench/bench_app_long_source.py --sources
    git archive <commit> | tar -x -C /tmp/before && python bench/bench_app_long_source.py --repo /tmp/before
"""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
import threading
import time

import _setup  # noqa: F401
import space_server

# Run in the server before the app is built: the tests' settings with long sources and the default text length and rows.
LONG_SOURCE_SETTINGS = """
import dataclasses
from support import app_server as _app_server
_for_tests = _app_server.settings_for_tests
_app_server.settings_for_tests = lambda *names: dataclasses.replace(
    _for_tests(*names), max_chars=5000, max_rows=1000, long_source={"long_source": "windows", "retriever": "bm25"}
)
"""

COMPARE = [
    "tiny",
    ["faithfulness", "precision"],
    "mean",
    "none",
    "",
    "encoder",
    "A council voted for a new library.",
    "A library.",
    "The council voted.",
    "A library was built.",
    *[""] * 4,
]

BATCH = ["tiny", ["faithfulness"], "mean", "none", "", "encoder"]


def probe_file(folder: str, rows: int, systems: int, sentences: int) -> str:
    path = os.path.join(folder, "one-letter-sentences.csv")
    output = " ".join(["a."] * sentences)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", *(f"system_{number}" for number in range(1, systems + 1))])
        for row in range(rows):
            writer.writerow([f"Source {row}. It is short.", *[output] * systems])
    return path


def sources_file(folder: str, rows: int) -> str:
    path = os.path.join(folder, "long-sources.csv")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "system"])
        writer.writerows([("Ph.D. " * 833)[:4990] + f" {row}.", "The council met."] for row in range(rows))
    return path


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", action="store_true", help='the long sources\' probe ("Ph.D. " repeated)')
    parser.add_argument("--rows", type=int, default=None, help="rows of the file (default 20; 1000 with --sources)")
    parser.add_argument("--systems", type=int, default=6)
    parser.add_argument("--sentences", type=int, default=1666, help="one-letter sentences per output (default 1666)")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds between the upload and the Compare")
    parser.add_argument("--repo", default=space_server.REPO, help="the checkout whose app is served (default: this)")
    args = parser.parse_args()

    from gradio_client import handle_file
    from support.models import build_tiny, prebuilt

    with tempfile.TemporaryDirectory(prefix="bartscore-long-source-") as workdir:
        checkpoint = prebuilt(os.path.join(workdir, "tiny"), build_tiny, family="bart")
        if args.sources:
            rows = args.rows or 1000
            upload = sources_file(workdir, rows)
            probe = f"{rows} rows, each source 'Ph.D. ' repeated to 5000 characters, one short output"
        else:
            rows = args.rows or 20
            upload = probe_file(workdir, rows, args.systems, args.sentences)
            probe = f"{rows} rows x {args.systems} systems x {args.sentences} one-letter sentences"
        kilobytes = os.path.getsize(upload) / 1000
        with space_server.served(checkpoint, workdir, repo=args.repo, setup=LONG_SOURCE_SETTINGS) as (url, server):
            uploader = space_server.connect(url, server)
            other = space_server.connect(url, server)
            other.predict(*COMPARE, api_name="/compare")  # loads the model
            start = time.monotonic()
            other.predict(*COMPARE, api_name="/compare")
            alone = time.monotonic() - start
            refusal: dict = {}

            def send_upload() -> None:
                begun = time.monotonic()
                try:
                    uploader.predict(*BATCH, handle_file(upload), "none", api_name="/score_file")
                    refusal["message"] = "(scored, not refused)"
                except Exception as error:  # the refusal, as gradio_client raises it
                    refusal["message"] = str(error)
                refusal["seconds"] = time.monotonic() - begun

            thread = threading.Thread(target=send_upload)
            thread.start()
            time.sleep(args.delay)
            start = time.monotonic()
            other.predict(*COMPARE, api_name="/compare")
            behind = time.monotonic() - start
            thread.join()
            peak = peak_mib(server.pid)
    print(f"app: {os.path.abspath(args.repo)}")
    print(f"upload: {kilobytes:.0f} KB, {probe}")
    print(f"seconds until the upload was refused: {refusal['seconds']:.2f}")
    print(f"  message: {refusal['message'][:300]}")
    print(f"seconds of a small Compare sent {args.delay:g} s after it: {behind:.2f} (alone: {alone:.2f})")
    print(f"server's peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
