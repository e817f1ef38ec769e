#!/usr/bin/env python
"""Time and peak memory of sentence splitting (long_source="windows") as the text grows: bart_score's split (pysbd in
bounded pieces) against pysbd's own `Segmenter.segment` on the whole text.

Texts: `"a. " * N` and `"The cat sat on the mat. " * N` (the issue's probes), and two of pysbd's rules that are
quadratic on their own: a run of abbreviations (`"Mr. " * N`, one sentence) and a lettered list (`"a. item b. item
..."`). Each split runs in a fresh interpreter under an address-space cap (--cap-gib) and a time limit (--timeout); the
figures printed are its wall time (of the split alone, when it finishes), its peak resident memory and how it ended.
pysbd's whole-text split runs only up to --pysbd-max sentences (it takes minutes beyond).

    python bench/bench_sentence_split.py [--sizes 2000,4000,8000,50000,200000] [--pysbd-max 8000] [--timeout 120]
"""

import argparse
import resource
import subprocess
import sys
import time

from _setup import REPO

TEXTS = {
    "a. ": "'a. ' * n",
    "The cat sat on the mat. ": "'The cat sat on the mat. ' * n",
    "Mr. ": "'Mr. ' * n",
    "lettered list": "''.join(f'{chr(97 + i % 26)}. item ' for i in range(n))",
}
SPLITTERS = {
    "bart_score": "from bart_score.long_documents.windows import split_sentences as split",
    "pysbd": "import pysbd\nsplit = pysbd.Segmenter(language='en', clean=False).segment",
}
CHILD = """
import resource, sys, time
sys.path.insert(0, {repo!r})
{splitter}
n = {n}
text = {text}
start = time.perf_counter()
sentences = split(text)
seconds = time.perf_counter() - start
print(len(text), len(sentences), seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def run(splitter, text, n, cap_gib, timeout):
    code = CHILD.format(repo=REPO, splitter=SPLITTERS[splitter], n=n, text=TEXTS[text])
    cap = int(cap_gib * 2**30)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit, text=True
    )
    try:
        out, err = child.communicate(timeout=timeout)
        ended = f"exit {child.returncode}"
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        ended = f"killed at {timeout} s"
    wall = time.perf_counter() - started
    if child.returncode == 0:
        chars, sentences, seconds, peak_kib = out.split()
        peak = int(peak_kib) / 1024
        return f"{int(chars):>9} chars {int(sentences):>7} sentences {float(seconds):8.2f} s  peak {peak:5.0f} MiB"
    reason = (err.strip().splitlines() or [""])[-1][:80]
    return f"{'':>33} {wall:8.2f} s  {ended} {reason}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,4000,8000,20000,50000,100000,200000")
    parser.add_argument("--texts", default=",".join(TEXTS), help="which texts (comma-separated)")
    parser.add_argument("--pysbd-max", type=int, default=8000, help="pysbd's whole-text split up to this N")
    parser.add_argument("--cap-gib", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    for text in args.texts.split(","):
        for n in sizes:
            for splitter in SPLITTERS:
                if splitter == "pysbd" and n > args.pysbd_max:
                    continue
                figures = run(splitter, text, n, args.cap_gib, args.timeout)
                print(f"{text!r:28} N={n:<7} {splitter:10} {figures}", flush=True)


if __name__ == "__main__":
    main()
