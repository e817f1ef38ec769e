#!/usr/bin/env python
"""Reading tables: what refusing an oversized upload costs the Space, and how the command line's reader scales.

Space (space.batch.parse_upload with the Space's default limits): a 1.8 MB CSV of 200,000 columns and a 20 MB CSV of
3.4 million rows (just under the 20 MiB upload limit), both over the limits; the seconds and the peak of Python
allocations (tracemalloc) until the refusal. Command line (bart_score.read_table_corpus, no limits): CSV files of
one row and a growing number of system columns, and of three columns and a growing number of rows; seconds per
file and per thousand columns or rows, which stay flat when reading is linear.

    python bench/bench_table_reading.py
    python bench/bench_table_reading.py --repo /tmp/before --columns 12500 25000 50000   # an older checkout
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
import time
import tracemalloc

from _setup import REPO

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def wide_csv(path, columns):
    """A header of `columns` names (source, then systems) and one row."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("source," + ",".join(f"s{i}" for i in range(columns - 1)) + "\n")
        handle.write("x," + ",".join("y" for _ in range(columns - 1)) + "\n")
    return path


def long_csv(path, rows, row="The cat sat.,A cat.,Cat!\n"):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("source,reference,sys\n")
        handle.write(row * rows)
    return path


def timed(call):
    start = time.perf_counter()
    try:
        call()
        outcome = "read"
    except Exception as error:  # the refusal being measured
        outcome = f"refused: {str(error)[:70]}"
    return time.perf_counter() - start, outcome


def peak_mib(call):
    tracemalloc.start()
    with contextlib.suppress(Exception):
        call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=REPO, help="the checkout whose reader and app are measured")
    parser.add_argument("--columns", type=int, nargs="+", default=[25_000, 50_000, 100_000, 200_000])
    parser.add_argument("--rows", type=int, nargs="+", default=[250_000, 500_000, 1_000_000])
    parser.add_argument("--space-columns", type=int, default=200_000, help="columns of the Space's wide file")
    parser.add_argument("--no-space", action="store_true", help="skip the Space's refusals")
    args = parser.parse_args()
    sys.path[:0] = [os.path.abspath(args.repo)]
    bart_score = importlib.import_module("bart_score")
    print(f"reader of {os.path.abspath(args.repo)}")

    with tempfile.TemporaryDirectory(prefix="bartscore-reading-") as folder:
        if not args.no_space:
            try:
                batch, settings = (importlib.import_module(f"space.{name}") for name in ("batch", "settings"))
            except ModuleNotFoundError:  # a checkout from before the space package had all of the Space in app.py
                batch = settings = importlib.import_module("app")
            print("\nSpace: refusing oversized uploads (default limits: 1000 rows, 5000 characters a text)")
            print(f"{'file':<34} {'MB':>6} {'seconds':>8} {'peak MiB':>9}  outcome")
            wide = wide_csv(os.path.join(folder, "wide.csv"), args.space_columns)
            for label, path in (
                (f"{args.space_columns:,} columns, 1 row", wide),
                ("3,400,000 rows, 3 columns", long_csv(os.path.join(folder, "long.csv"), 3_400_000, "s,r,o\n")),
            ):

                def parse(path=path):
                    return batch.parse_upload(
                        path, max_rows=settings.DEFAULT_MAX_ROWS, max_chars=settings.DEFAULT_MAX_CHARS
                    )

                seconds, outcome = timed(parse)
                size = os.path.getsize(path) / 1e6
                print(f"{label:<34} {size:6.1f} {seconds:8.3f} {peak_mib(parse):9.1f}  {outcome}", flush=True)

        print("\nCommand line: bart_score.read_table_corpus, no limits")
        print(f"{'file':<34} {'MB':>6} {'seconds':>8} {'s per 1000':>10}")
        for columns in args.columns:
            path = wide_csv(os.path.join(folder, f"wide-{columns}.csv"), columns)
            seconds, _ = timed(lambda path=path: bart_score.read_table_corpus(path))
            size = os.path.getsize(path) / 1e6
            print(f"{f'{columns:,} columns, 1 row':<34} {size:6.1f} {seconds:8.3f} {seconds / columns * 1000:10.5f}")
        for rows in args.rows:
            path = long_csv(os.path.join(folder, f"long-{rows}.csv"), rows)
            seconds, _ = timed(lambda path=path: bart_score.read_table_corpus(path))
            size = os.path.getsize(path) / 1e6
            print(f"{f'{rows:,} rows, 3 columns':<34} {size:6.1f} {seconds:8.3f} {seconds / rows * 1000:10.5f}")


if __name__ == "__main__":
    main()
